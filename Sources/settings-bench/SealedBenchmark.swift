import Foundation
import SettingsStore
import SettingsSync

/// Sealed beside plain, in one run (`settings-bench hub`, part `sealed`): the initial sync of a
/// fresh store and single sets travelling between two stores, through a hub namespace and
/// through a synced folder, each once in the clear and once sealed under a sync key.
struct SealedBenchmark {
    let count: Int
    let hubURL: () throws -> String
    let scratch: Scratch

    /// One way of syncing, plain or sealed.
    struct Outcome {
        var initialSeconds: Double
        var latencies: [Double]
    }

    func run(into report: inout Report) throws {
        let keyring = SyncKeyring(current: .random())
        for target in ["hub", "folder"] {
            let plain = try measure(target, keyring: nil)
            let sealed = try measure(target, keyring: keyring)
            report.rate(
                "initial sync of \(count / 1000)k keys through the \(target), sealed",
                ours: Double(count) / sealed.initialSeconds,
                peer: Double(count) / plain.initialSeconds, peerName: "the same in the clear",
                target: .ratio(atLeast: 0.91))
            report.latency(
                "a single set, one store to another through the \(target), sealed",
                sorted: sealed.latencies.sorted(),
                peer: plain.latencies.sorted(), peerName: "the same in the clear", target: .ratio(atMost: 1.1)
            )
        }
    }

    /// Fills a store, syncs it through `target`, then times a fresh store's initial sync and
    /// 50 single sets from the first store reaching the second.
    private func measure(_ target: String, keyring: SyncKeyring?) throws -> Outcome {
        let name = "\(target)-\(keyring == nil ? "plain" : "sealed")"
        note("  sealed: \(name), \(count) keys")
        let writer = try Settings(path: scratch.file("\(name)-writer.sqlite"))
        try writer.transaction { transaction in
            for index in 0..<count { try transaction.set("value \(index)", forKey: "bench.sealed.\(index)") }
        }
        let folder = scratch.file("\(name)-folder")
        let url = target == "hub" ? try hubURL() : ""
        func link(_ settings: Settings) throws -> (status: () -> Bool, stop: () -> Void) {
            let replicator = Replicator(settings: settings)
            if target == "hub" {
                var configuration = HubConfiguration(url: url)
                configuration.keyring = keyring
                let link = try replicator.sync(withHub: configuration)
                return ({ link.status.isConnected && link.status.pendingUp == 0 }, link.stop)
            }
            let link = replicator.sync(withFolder: folder, keyring: keyring)
            return ({ link.status.isWatching && link.status.pendingUp == 0 }, link.stop)
        }
        let writing = try link(writer)
        defer { writing.stop() }
        try wait(timeout: 600) { writing.status() }
        let reader = try Settings(path: scratch.file("\(name)-reader.sqlite"))
        let clock = ContinuousClock()
        let start = clock.now
        let reading = try link(reader)
        defer { reading.stop() }
        try wait(timeout: 600) { reader.value(forKey: "bench.sealed.\(count - 1)") != nil }
        let initial = (clock.now - start).seconds
        var latencies: [Double] = []
        for round in 0..<50 {
            let sent = clock.now
            try writer.set(round, forKey: "bench.sealed.single")
            try wait(timeout: 30) { reader.value(forKey: "bench.sealed.single") == .integer(Int64(round)) }
            latencies.append((clock.now - sent).seconds)
        }
        return Outcome(initialSeconds: initial, latencies: latencies)
    }

    private func wait(timeout: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else {
                throw SettingsError(.timeout, "the sealed benchmark waited \(timeout) s")
            }
            usleep(500)
        }
    }
}
