import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("Daemon protocol: bad input, pipelining, many clients, slow watchers")
    struct DaemonProtocolTests {
        let directory = TemporaryDirectory()

        /// Sends raw bytes and returns the frames that come back until `count` arrive.
        func exchange(_ client: BlockingClient, _ bytes: [UInt8], expecting count: Int) throws -> [WireMessage
            .Incoming]
        {
            try client.write(bytes)
            return try (0..<count).map { _ in try client.receive() }
        }

        @Test("garbage, invalid UTF-8, unknown operations and wrong types get errors; nothing changes")
        func badInput() throws {
            let daemon = try DaemonProcess(directory)
            _ = daemon.cli("set", "kept", "value")
            let client = try daemon.client()
            let frames: [[UInt8]] = [
                Array("this is not json\n".utf8), [0xFF, 0xFE, 0x7B, 0x0A],
                Array("{\"id\":1,\"op\":\"explode\"}\n".utf8),
                Array("{\"id\":2,\"op\":\"set\",\"key\":7,\"value\":1}\n".utf8),
                Array("{\"id\":3,\"op\":\"set\",\"key\":\"kept\"}\n".utf8),
                Array("{\"id\":4,\"op\":\"set\",\"key\":\"\",\"value\":1}\n".utf8),
                Array("{\"id\":5,\"op\":\"delete\",\"key\":\"bad\\u0001key\"}\n".utf8),
                Array((String(repeating: "[", count: 5000) + "\n").utf8),
            ]
            let answers = try exchange(client, frames.flatMap { $0 }, expecting: frames.count)
            var codes: [SettingsError.Code] = []
            for answer in answers {
                guard case .response(_, .failure(let error)) = answer else {
                    Issue.record("expected an error, got \(answer)")
                    continue
                }
                codes.append(error.code)
            }
            #expect(
                codes == [
                    .protocolError, .protocolError, .unknownOperation, .protocolError, .protocolError,
                    .invalidKey, .invalidKey,
                    .protocolError,
                ])
            #expect(daemon.cli("get", "kept").output == "value\n")
            #expect(try DaemonStatus(fields: client.request(.status)).keys == 1)
        }

        @Test(
            "an oversized frame gets frameTooLarge (not a reset) and its connection is closed; others are unaffected"
        )
        func oversizedFrame() throws {
            let daemon = try DaemonProcess(directory)
            let bystander = try daemon.client()
            let client = try daemon.client()
            // Still sending long after the limit: the explanation must arrive all the same.
            try client.write([UInt8](repeating: UInt8(ascii: "a"), count: 12 << 20))
            guard case .response(nil, .failure(let error)) = try client.receive() else {
                Issue.record("no error frame")
                return
            }
            #expect(error.code == .frameTooLarge)
            #expect(throws: SettingsError.self) { try client.receive() }
            try bystander.request(.set(key: "still", value: "fine"))
            #expect(try bystander.request(.get(key: "still"))["value"] == "fine")
        }

        @Test("pipelined requests are answered in order, and a get after a set sees it")
        func pipelining() throws {
            let daemon = try DaemonProcess(directory)
            let client = try daemon.client()
            var requests: [WireRequest] = []
            for index in 0..<500 {
                requests.append(.set(key: "p", value: .integer(Int64(index))))
                requests.append(.get(key: "p"))
            }
            let results = try client.pipeline(requests)
            for index in 0..<500 {
                #expect(try results[index * 2 + 1].get()["value"] == .integer(Int64(index)))
            }
        }

        @Test("a pipeline whose answers outgrow the daemon's outbound limit is read as it is sent")
        func pipelineLargerThanTheOutboundLimit() throws {
            let daemon = try DaemonProcess(directory)
            let client = try daemon.client()
            let value = SettingValue.string(String(repeating: "v", count: 512 << 10))
            try client.request(.set(key: "large", value: value))
            // 64 answers of 512 KiB are 32 MiB, twice the daemon's 16 MiB outbound limit: a client
            // that wrote every request before reading would be dropped as not reading.
            let requests =
                [WireRequest](repeating: .get(key: "large"), count: 64)
                + [WireRequest](repeating: .get(key: "absent"), count: 20_000)
            let results = try client.pipeline(requests)
            #expect(results.count == requests.count)
            #expect(try results.prefix(64).allSatisfy { try $0.get()["value"] == value.json })
            #expect(try results.suffix(20_000).allSatisfy { try $0.get()["found"] == .bool(false) })
        }

        @Test("256 clients at once each write and read their own key")
        func manyClients() async throws {
            let daemon = try DaemonProcess(directory)
            let socket = daemon.socket
            let clients = try (0..<256).map { _ in try BlockingClient(socketPath: socket, timeout: 10) }
            try await waitUntil { try DaemonStatus(fields: clients[0].request(.status)).clients == 256 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    let box = UncheckedBox(client)
                    group.addTask {
                        for round in 0..<5 {
                            try box.value.request(.set(key: "client.\(index)", value: .integer(Int64(round))))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let values = try clients[0].request(.list(prefix: "client.", includeValues: true))["values"]
            guard case .object(let members)? = values else {
                Issue.record("no values")
                return
            }
            #expect(members.count == 256)
            #expect(members.values.allSatisfy { $0 == .integer(4) })
        }

        @Test("a watcher that never reads is dropped once its buffer is full; writers are not blocked")
        func slowWatcher() async throws {
            let daemon = try DaemonProcess(directory)
            let stuck = try daemon.client()
            try stuck.request(.watch(filter: .all))
            let writer = try daemon.client()
            // Each write changes the value (identical writes are no-ops that announce nothing).
            for index in 0..<60 {
                let big = SettingValue.string(String(repeating: "x", count: 500_000) + "\(index)")
                try writer.request(.set(key: "big.\(index % 3)", value: big))
            }
            try await waitUntil { try DaemonStatus(fields: writer.request(.status)).watches == 0 }
            // It gets a few seconds to read its last frames and the explanation, then it is gone.
            try await waitUntil(timeout: 15) {
                try DaemonStatus(fields: writer.request(.status)).clients == 1
            }
        }

        @Test("a client running as another user is refused (SO_PEERCRED)", .enabled(if: getuid() == 0))
        func otherUserRefused() throws {
            let daemon = try DaemonProcess(directory)
            // Let the file permission through, so the daemon's own uid check is what refuses.
            chmod(daemon.socket, 0o666)
            // A copy of the CLI that `nobody` can run wherever the build folder is.
            let folder = "/tmp/sdt-bin-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try SettingsdBinary.copy(to: folder + "/settingsd")
            chmod(folder, 0o755)
            chmod(folder + "/settingsd", 0o755)
            let result = DaemonProcess.run(
                [
                    "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    folder + "/settingsd",
                ]
                    + ["get", "k", "--socket", daemon.socket], through: "/usr/bin/env")
            #expect(result.status == 1)
            #expect(result.error.contains("uid 65534 may not use this settingsd"))
        }

        @Test("the async client reads, writes, and receives watch events")
        func asyncClient() async throws {
            let daemon = try DaemonProcess(directory)
            let client = try await SettingsClient.connect(to: daemon.socket)
            let events = try await client.watch(.keys(["audio.volume"]))
            try await client.set(0.25, forKey: "audio.volume")
            try await client.set(true, forKey: "audio.muted")
            #expect(try await client.value(forKey: "audio.volume") == 0.25)
            #expect(try await client.value(for: .muted) == true)
            #expect(try await client.keys(withPrefix: "audio.") == ["audio.muted", "audio.volume"])
            var iterator = events.makeAsyncIterator()
            let change = try await iterator.next()
            #expect(change?.keys == ["audio.volume"])
            #expect(change?.changes.first?.value == 0.25)
            #expect(try await client.removeValue(forKey: "audio.volume"))
            #expect(try await client.status().keys == 1)
            client.close()
            await #expect(throws: SettingsError.self) { try await client.value(forKey: "audio.muted") }
        }

        @Test(
            "the async client reconnects after its daemon restarts; each watch resumes where it stopped, missing nothing"
        )
        func asyncClientReconnects() async throws {
            let daemon = try DaemonProcess(directory)
            let client = try await SettingsClient.connect(to: daemon.socket)
            var events = try await client.watch(.keys(["k"])).makeAsyncIterator()
            try await client.set(1, forKey: "k")
            #expect(try await events.next()?.reason == .local)
            #expect(daemon.terminate() == 0)
            let whileDown = await #expect(throws: SettingsError.self) { try await client.set(2, forKey: "k") }
            #expect(whileDown?.code == .connectionLost)
            // Written into the database while no daemon runs: the watch must still hear it.
            #expect(
                DaemonProcess.run(["set", "k", "2", "--type", "int", "--db", daemon.database]).status == 0)
            try daemon.start()
            let missed = try await events.next()
            #expect(missed?.reason == .local && missed?.changes.first?.value == 2)
            try await client.set(3, forKey: "k")
            let live = try await events.next()
            #expect(live?.changes.first?.value == 3 && live?.sequence == (missed?.sequence ?? 0) + 1)
            client.close()
        }

        @Test("without reconnection, a watch ends with connectionLost when the daemon goes")
        func asyncClientWithoutReconnection() async throws {
            let daemon = try DaemonProcess(directory)
            let client = try await SettingsClient.connect(to: daemon.socket, reconnects: false)
            var events = try await client.watch(.all).makeAsyncIterator()
            #expect(daemon.terminate() == 0)
            let error = await #expect(throws: SettingsError.self) { _ = try await events.next() }
            #expect(error?.code == .connectionLost)
        }
    }
}

/// Hands a non-Sendable value to one task that alone uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
