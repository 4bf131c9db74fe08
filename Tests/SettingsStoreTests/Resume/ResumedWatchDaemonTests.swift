import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore
@testable import SettingsWire

extension Reliability {
    @Suite(
        "Resumed watches: a watcher away while changes happen hears each once, in order, or is told why not")
    struct ResumedWatchDaemonTests {
        @Test(
            "a stopped watcher, its daemon restarted meanwhile, receives exactly the 10,000 changes it missed in order, then live ones"
        )
        func watcherAwayDuringTenThousandChanges() async throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            let (watcher, output) = try daemon.watcher("w.", "--json")
            defer { watcher.terminate() }
            let text = Mutex("")
            output.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            defer { output.fileHandleForReading.readabilityHandler = nil }
            let client = try daemon.client()
            try await waitUntil { try client.status().watches == 1 }
            #expect(daemon.cli("set", "w.first", "0").status == 0)
            try await waitUntil { text.withLock { $0.contains("w.first") } }
            kill(watcher.processIdentifier, SIGSTOP)
            #expect(daemon.terminate() == 0)
            // 10,000 changes while no daemon runs, straight into its database, one commit each.
            let store = try Settings(path: daemon.database)
            for index in 0..<10_000 { try store.set(index, forKey: "w.k\(index % 97)") }
            store.close()
            try daemon.start()
            let live = try daemon.client()
            for index in 0..<3 { try live.request(.set(key: "w.live", value: .integer(Int64(index)))) }
            kill(watcher.processIdentifier, SIGCONT)
            try await waitUntil(timeout: 60) {
                text.withLock { $0.contains(#""value":2"#) && $0.contains("w.live") }
            }
            var heard: [(key: String, value: SettingValue?)] = []
            var sequences: [Int64] = []
            for line in text.withLock({ $0 }).split(separator: "\n") {
                let fields = try JSONFields(try JSONValue.parse(String(line)), what: "an event")
                #expect(try fields.string("reason") != "resync", "nothing to re-read: the watch resumed")
                sequences.append(try fields.integer("sequence"))
                for change in try fields.array("changes", limit: .max) {
                    let member = try JSONFields(change, what: "a change")
                    heard.append(
                        (try member.string("key"), try change["value"].map { try SettingValue(json: $0) }))
                }
            }
            let expected: [(key: String, value: SettingValue?)] =
                [("w.first", "0")] + (0..<10_000).map { ("w.k\($0 % 97)", .integer(Int64($0))) }
                + (0..<3).map { ("w.live", .integer(Int64($0))) }
            #expect(heard.count == expected.count)
            #expect(heard.map(\.key) == expected.map(\.key))
            #expect(heard.map(\.value) == expected.map(\.value))
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        }

        @Test(
            "a watch since a point the history no longer reaches is refused with historyCompacted and the oldest point"
        )
        func compactedWatchIsRefused() async throws {
            let directory = TemporaryDirectory()
            var configuration = SettingsConfiguration()
            configuration.history = HistoryRetention(maximumRecords: 100)
            let store = try Settings(path: directory.database, configuration: configuration)
            for index in 0..<500 { try store.set(index, forKey: "k") }
            while try store.pruneHistory() > 0 {}
            store.close()
            let daemon = try DaemonProcess(directory, arguments: ["--history-max", "100"])
            let client = try daemon.client()
            let error = #expect(throws: SettingsError.self) {
                try client.request(.watch(filter: .all, since: 10))
            }
            #expect(error?.code == .historyCompacted && error?.oldestReplayableSequence == 400)
            let cli = daemon.cli("watch", "--since", "10")
            #expect(cli.status == 1 && cli.error.contains("after 400 at the earliest"))
            let answer = try client.request(.watch(filter: .all, since: 400))
            #expect(answer["sequence"] == .integer(500))
            let replayed = try client.nextEvent().change
            #expect(replayed.sequence == 500 && replayed.changes.count == 100)
        }

        @Test("settingsd set is one request: the daemon types the value by the key's schema")
        func setIsOneRequest() throws {
            let directory = TemporaryDirectory()
            try FileManager.default.createDirectory(
                atPath: directory.file("schemas"), withIntermediateDirectories: true)
            try
                #"{"format": "settingsd-schema", "version": 1, "keys": {"audio.volume": {"type": "double"}, "ui.size": {"type": "int"}}}"#
                .write(
                    toFile: directory.file("schemas/app.json"), atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(directory, arguments: ["--schemas", directory.file("schemas")])
            let proxy = try LoggingProxy(to: daemon.socket)
            let run = { (arguments: [String]) in DaemonProcess.run(arguments + ["--socket", proxy.socket]) }
            let first = run(["set", "audio.volume", "0.5"])
            #expect(first.status == 0, "\(first.error)")
            #expect(proxy.requests.count == 1 && proxy.requests[0].contains(#""text":"0.5""#))
            #expect(try daemon.client().request(.get(key: "audio.volume"))["value"] == .double(0.5))
            let bad = run(["set", "ui.size", "big"])
            #expect(bad.status == 64 && bad.error.contains("'big' is not a 64-bit integer"))
            #expect(proxy.requests.count == 2)
            #expect(run(["set", "free.text", "0.5"]).status == 0)
            #expect(try daemon.client().request(.get(key: "free.text"))["value"] == .string("0.5"))
        }

        @Test("two shell loops incrementing one counter 1,000 times each with --if-version end at 2,000")
        func shellIncrementsNeverLoseOne() async throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            let script = """
                for i in $(seq 1000); do
                  until { read -r version; read -r count; } < <("$SETTINGSD" get jobs.count --with-version --socket "$SOCK")
                        "$SETTINGSD" set jobs.count $(( ${count:-0} + 1 )) --type int --if-version "$version" --socket "$SOCK" 2>/dev/null
                  do :; done
                done
                """
            let environment = [
                "SETTINGSD": SettingsdBinary.path, "SOCK": daemon.socket, "PATH": "/usr/bin:/bin",
            ]
            let loops = try (0..<2).map { _ in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments = ["-c", script]
                process.environment = environment
                try process.run()
                return process
            }
            for loop in loops { loop.waitUntilExit() }
            #expect(loops.allSatisfy { $0.terminationStatus == 0 })
            #expect(try daemon.client().request(.get(key: "jobs.count"))["value"] == .integer(2_000))
        }

        @Test(
            "two async clients updating one counter 1,000 times each by compare-and-set end at 2,000; a conflicting setMany writes nothing"
        )
        func clientUpdatesNeverLoseOne() async throws {
            let directory = TemporaryDirectory()
            let daemon = try DaemonProcess(directory)
            let counter = SettingKey("jobs.count", default: 0)
            let clients = [
                try await SettingsClient.connect(to: daemon.socket),
                try await SettingsClient.connect(to: daemon.socket),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients {
                    group.addTask { for _ in 0..<1_000 { try await client.update(counter) { $0 += 1 } } }
                }
                try await group.waitForAll()
            }
            #expect(try await clients[0].value(for: counter) == 2_000)
            let held = try #require(try await clients[0].versionedValue(forKey: "jobs.count"))
            try await clients[0].set(1, forKey: "other")
            let conflict = await #expect(throws: SettingsError.self) {
                try await clients[1].write([
                    .set(5, forKey: "jobs.count", if: held.precondition),
                    .set(9, forKey: "other", if: .absent), .set(1, forKey: "third"),
                ])
            }
            #expect(conflict?.code == .versionMismatch && conflict?.key == "other")
            #expect(conflict?.currentVersions.count == 1 && conflict?.currentVersions["other"] != nil)
            #expect(try await clients[1].value(forKey: "jobs.count") == 2_000)
            #expect(try await clients[1].value(forKey: "third") == nil)
            try await clients[1].write([
                .set(5, forKey: "jobs.count", if: held.precondition), .set(1, forKey: "third"),
            ])
            #expect(try await clients[0].value(forKey: "jobs.count") == 5)
            for client in clients { client.close() }
        }
    }
}
