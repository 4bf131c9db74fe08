import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    @Suite("Load: 256 concurrent clients")
    struct LoadTests {
        let directory = TemporaryDirectory()

        /// The daemon's resident memory in MiB.
        func residentMiB(_ pid: Int32) -> Double {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kilobytes = Double(line.split(separator: " ")[1])
            else { return .nan }
            return kilobytes / 1024
        }

        @Test(
            "mixed get/set/watch from 256 clients: no errors, every watcher sees every change of its keys in order"
        )
        func mixedLoad() async throws {
            let seconds = Double(SuiteScale.pick(ci: 3, full: 60))
            let daemon = try DaemonProcess(directory)
            let socket = daemon.socket
            let writers = 96
            let watchers = 64
            let readers = 256 - writers - watchers
            let errors = Mutex<[String]>([])
            let writesPerKey = Mutex<[String: Int]>([:])
            let seenPerKey = Mutex<[String: [Int]]>([:])
            let stop = Atomic<Bool>(false)
            let memoryBefore = residentMiB(daemon.process.processIdentifier)

            // Watchers first: each watches four writers' keys and checks values only ever increase.
            let watching = ThreadGroup()
            let ready = Atomic<Int>(0)
            for watcher in 0..<watchers {
                let keys = (0..<4).map { "load.\((watcher * 4 + $0) % writers)" }
                watching.run {
                    do {
                        let client = try BlockingClient(socketPath: socket, timeout: 60)
                        try client.request(.watch(filter: .keys(Set(keys))))
                        ready.add(1, ordering: .releasing)
                        var last: [String: Int64] = [:]
                        var finished: Set<String> = []
                        var seen: [String: Int] = [:]
                        while finished.count < keys.count {
                            let change = try client.nextEvent().change
                            for keyChange in change.changes {
                                guard case .integer(let value)? = keyChange.value else { continue }
                                if value < 0 {
                                    finished.insert(keyChange.key)
                                    continue
                                }
                                if let previous = last[keyChange.key], value <= previous {
                                    errors.withLock {
                                        $0.append("\(keyChange.key): \(value) after \(previous)")
                                    }
                                }
                                last[keyChange.key] = value
                                seen[keyChange.key, default: 0] += 1
                            }
                        }
                        seenPerKey.withLock { all in
                            for (key, count) in seen { all[key, default: []].append(count) }
                        }
                    } catch {
                        errors.withLock { $0.append("watcher: \(error)") }
                    }
                }
            }
            try await waitUntil { ready.load(ordering: .acquiring) == watchers }

            let working = ThreadGroup()
            for writer in 0..<writers {
                working.run {
                    do {
                        let client = try BlockingClient(socketPath: socket, timeout: 60)
                        let key = "load.\(writer)"
                        var value: Int64 = 0
                        while !stop.load(ordering: .relaxed) {
                            value += 1
                            try client.request(.set(key: key, value: .integer(value)))
                        }
                        writesPerKey.withLock { $0[key] = Int(value) }
                        try client.request(.set(key: key, value: .integer(-1)))  // the end marker
                    } catch {
                        errors.withLock { $0.append("writer: \(error)") }
                    }
                }
            }
            for reader in 0..<readers {
                working.run {
                    do {
                        let client = try BlockingClient(socketPath: socket, timeout: 60)
                        while !stop.load(ordering: .relaxed) {
                            _ = try client.request(.get(key: "load.\(reader % writers)"))
                            _ = try client.request(.list(prefix: "load.1", includeValues: false))
                        }
                    } catch {
                        errors.withLock { $0.append("reader: \(error)") }
                    }
                }
            }
            try await Task.sleep(for: .seconds(seconds))
            stop.store(true, ordering: .relaxed)
            await working.wait()
            await watching.wait()

            #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0.prefix(5) })")
            let written = writesPerKey.withLock { $0 }
            for (key, counts) in seenPerKey.withLock({ $0 }) {
                for count in counts {
                    #expect(count == written[key], "\(key): saw \(count) of \(written[key] ?? -1) changes")
                }
            }
            #expect(written.values.reduce(0, +) > writers)
            let memoryAfter = residentMiB(daemon.process.processIdentifier)
            #expect(
                memoryAfter < memoryBefore + 100, "daemon grew from \(memoryBefore) to \(memoryAfter) MiB")
        }
    }
}
