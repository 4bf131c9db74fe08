import Foundation
import SettingsDaemonClient
import SettingsStore
import SettingsWire

/// `settings-bench daemon --only resume`: what never missing a change or losing an update costs:
/// a watch resumed after 100,000 changes, sets with a version precondition beside plain sets,
/// and `settingsd set` as a whole process beside `settingsd get`.
extension DaemonBenchmark {
    func resume(into report: inout Report, daemon: BenchDaemon) throws {
        try replay(into: &report, daemon: daemon)
        try conditionalSets(into: &report, daemon: daemon)
        setProcess(into: &report, daemon: daemon)
    }

    /// A watch resumed from before 100,000 changes (10,000 keys written ten times, in commits
    /// of 1,000): from the request until its last replayed change is read.
    private func replay(into report: inout Report, daemon: BenchDaemon) throws {
        let count = quick ? 20_000 : 100_000
        let writer = try BlockingClient(socketPath: daemon.socket)
        let status = try writer.status()
        let since = status.sequence
        for round in 0..<(count / 1_000) {
            let writes = (0..<1_000).map { index in
                WireRequest.KeyWrite(
                    key: "replay.\((round * 1_000 + index) % 10_000)", value: .integer(Int64(round)))
            }
            try writer.request(.setMany(changes: writes))
        }
        let watcher = try BlockingClient(socketPath: daemon.socket, timeout: 0)
        let started = Deadline.now
        try watcher.request(.watch(filter: .prefixes(["replay."]), since: since))
        var heard = 0
        while heard < count { heard += try watcher.nextEvent().change.changes.count }
        let seconds = (Deadline.now - started).seconds
        report.seconds(
            "watch resumed after \(count / 1_000)k changes: replayed", seconds,
            target: quick ? .reported : .atMost(0.5, "<= 0.5 s"))
    }

    /// Sets of 5,000 keys on one connection, each with the version its key holds (read first,
    /// not timed), beside plain sets of 5,000 others.
    private func conditionalSets(into report: inout Report, daemon: BenchDaemon) throws {
        let count = quick ? 1_000 : 5_000
        let client = try BlockingClient(socketPath: daemon.socket)
        for index in 0..<count {
            try client.request(.set(key: "cas.\(index)", value: 0))
            try client.request(.set(key: "plain.\(index)", value: 0))
        }
        var versions: [SettingPrecondition] = []
        for index in 0..<count {
            let answer = try client.request(.getStored(key: "cas.\(index)"))
            guard case .string(let text)? = answer["version"], let version = SettingVersion(text) else {
                throw SettingsError(.protocolError, "no version for cas.\(index)")
            }
            versions.append(.version(version))
        }
        let plain = try measureRate(count) { index in
            _ = try client.request(.set(key: "plain.\(index)", value: 1))
        }
        let conditional = try measureRate(count) { index in
            _ = try client.request(.set(key: "cas.\(index)", value: 1, precondition: versions[index]))
        }
        report.rate(
            "sets with a version precondition, one connection", ours: conditional, peer: plain,
            peerName: "plain sets", target: .ratio(atLeast: 0.9))
    }

    /// `settingsd set KEY VALUE` (one request, typed by the daemon) as a whole process beside
    /// `settingsd get KEY`.
    private func setProcess(into report: inout Report, daemon: BenchDaemon) {
        let count = quick ? 30 : 200
        let set = [binary, "set", "bench.process", "0.5", "--socket", daemon.socket]
        let get = [binary, "get", "bench.process", "--socket", daemon.socket]
        for _ in 0..<10 {
            ChildProcess.run(set)
            ChildProcess.run(get)
        }
        var sets: [Double] = []
        var gets: [Double] = []
        for _ in 0..<count {
            sets += ChildProcess.wallTimes(set, count: 1)
            gets += ChildProcess.wallTimes(get, count: 1)
        }
        report.time(
            "settingsd set (whole process)", ours: median(sets), peer: median(gets),
            peerName: "settingsd get (whole process)", target: .ratio(atMost: 1.2))
    }
}
