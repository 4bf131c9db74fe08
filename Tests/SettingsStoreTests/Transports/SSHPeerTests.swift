import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension TransportReliability {
    @Suite("SSH peers through a real sshd on 127.0.0.1", .enabled(if: SSHServer.isAvailable))
    struct SSHPeerTests {
        let directory = TemporaryDirectory()

        /// The test's environment, with the server's `ssh` command for the links.
        func environment(_ server: SSHServer) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment[SSHChannel.sshCommandVariable] = server.sshCommand
            return environment
        }

        /// A daemon syncing with `remote` over SSH through `server`.
        func localDaemon(_ server: SSHServer, remote: DaemonProcess) throws -> DaemonProcess {
            try DaemonProcess(
                directory, database: directory.file("local-\(UUID().uuidString.prefix(6)).sqlite"),
                arguments: [
                    "--peer", server.address(socket: remote.socket), "--remote-settingsd",
                    SettingsdBinary.path,
                ],
                environment: environment(server))
        }

        func waitForEqualDigests(_ daemons: [DaemonProcess]) async throws {
            try await waitUntil(timeout: 60) { Set(try daemons.map { try $0.status().digest }).count == 1 }
        }

        @Test(
            "two daemons over SSH converge: sets, deletes and a batch; sync --wait is honest; status shows the link"
        )
        func converge() async throws {
            let server = try SSHServer()
            let remote = try DaemonProcess(directory, database: directory.file("remote.sqlite"))
            let local = try localDaemon(server, remote: remote)
            _ = local.cli("set", "from.local", "1")
            _ = remote.cli("set", "from.remote", "2")
            _ = remote.cli("set", "doomed", "x")
            let changes = (0..<2_000).map {
                WireRequest.KeyWrite(key: "bulk.\($0)", value: .integer(Int64($0)))
            }
            try local.client().request(.setMany(changes: changes))
            try await waitForEqualDigests([local, remote])
            _ = local.cli("delete", "doomed")
            #expect(local.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(remote.cli("get", "doomed").status == 1)
            #expect(remote.cli("get", "bulk.1999").output == "1999\n")
            #expect(local.cli("get", "from.remote").output == "2\n")
            let link = try #require(try local.status().links.first)
            #expect(link.address == server.address(socket: remote.socket))
            #expect(link.state == "syncing")
            #expect(link.replica == (try remote.status().replica))
            #expect(local.cli("status").output.contains("ssh://"))
        }

        @Test(
            "the remote daemon restarted, then sshd killed and started again: the link says why it is down, comes back, and loses nothing"
        )
        func reconnects() async throws {
            let server = try SSHServer()
            let remote = try DaemonProcess(directory, database: directory.file("remote.sqlite"))
            let local = try localDaemon(server, remote: remote)
            _ = local.cli("set", "first", "1")
            try await waitForEqualDigests([local, remote])

            remote.kill()
            _ = local.cli("set", "while.remote.down", "2")
            try await waitUntil(timeout: 30) {
                (try local.status().links.first?.lastError ?? "").contains("no settingsd daemon is listening")
            }
            try remote.start()
            try await waitForEqualDigests([local, remote])
            #expect(remote.cli("get", "while.remote.down").output == "2\n")

            server.kill()
            _ = local.cli("set", "while.sshd.down", "3")
            _ = remote.cli("set", "remote.while.sshd.down", "4")
            try await waitUntil(timeout: 30) {
                (try local.status().links.first?.lastError ?? "").contains("connection refused")
            }
            try server.start()
            try await waitForEqualDigests([local, remote])
            #expect(remote.cli("get", "while.sshd.down").output == "3\n")
            #expect(local.cli("get", "remote.while.sshd.down").output == "4\n")
            #expect(try local.status().links.first?.lastError == nil)
        }

        /// A store syncing with `socket` through `server`, running `remoteCommand` there.
        func link(
            _ replicator: Replicator, _ server: SSHServer, socket: String,
            remoteCommand: String = SettingsdBinary.path
        ) throws -> ReplicaLink {
            let channel = SSHChannel(
                try SSHAddress(server.address(socket: socket)), remoteCommand: remoteCommand,
                sshCommand: server.sshCommand, connectTimeout: .seconds(20))
            return replicator.sync(over: channel)
        }

        func lastError(_ replicator: Replicator) -> String {
            replicator.links.first?.lastError ?? ""
        }

        @Test("an unknown host key and a refused login show their reason, and the link comes up once fixed")
        func hostKeyAndLogin() async throws {
            let server = try SSHServer()
            let remote = try DaemonProcess(directory, database: directory.file("remote.sqlite"))
            _ = remote.cli("set", "k", "v")
            let settings = Settings(inMemoryWith: .init())
            let replicator = Replicator(settings: settings)

            try server.trustHostKey("other_key")
            var link = try link(replicator, server, socket: remote.socket)
            try await waitUntil(timeout: 30) {
                lastError(replicator).contains("host key of 127.0.0.1 is unknown or has changed")
            }
            #expect(!link.isConnected)
            try server.trustHostKey("host_key")
            try await waitUntil(timeout: 30) { settings.value(forKey: "k") == "v" }
            link.stop()

            try server.authorize(key: "other_key")
            link = try self.link(replicator, server, socket: remote.socket)
            try await waitUntil(timeout: 30) {
                lastError(replicator).contains("127.0.0.1 refused the SSH login")
            }
            try server.authorize(key: "client_key")
            _ = remote.cli("set", "k2", "v2")
            try await waitUntil(timeout: 30) { settings.value(forKey: "k2") == "v2" }
            link.stop()
        }

        @Test("a missing or too old remote settingsd and a remote daemon that is not running each say so")
        func remoteSide() async throws {
            let server = try SSHServer()
            let remote = try DaemonProcess(directory, database: directory.file("remote.sqlite"))
            let replicator = Replicator(settings: Settings(inMemoryWith: .init()))

            var link = try link(
                replicator, server, socket: remote.socket, remoteCommand: "/nonexistent/settingsd")
            try await waitUntil(timeout: 30) {
                lastError(replicator).contains("'/nonexistent/settingsd' is not found on 127.0.0.1")
            }
            link.stop()

            let old = directory.file("old-settingsd")
            try "#!/bin/sh\necho \"Error: unknown command '$1'\" >&2\nexit 64\n".write(
                toFile: old, atomically: true, encoding: .utf8)
            chmod(old, 0o755)
            link = try self.link(replicator, server, socket: remote.socket, remoteCommand: old)
            try await waitUntil(timeout: 30) { lastError(replicator).contains("too old for SSH peers") }
            link.stop()

            link = try self.link(replicator, server, socket: directory.file("nobody.sock"))
            try await waitUntil(timeout: 30) {
                lastError(replicator).contains("on 127.0.0.1: no settingsd daemon is listening")
            }
            link.stop()

            // A login script that greets on standard output does not hide the bridge.
            let chatty = directory.file("chatty-settingsd")
            try "#!/bin/sh\necho 'Welcome to the remote machine'\nexec \(SettingsdBinary.path) \"$@\"\n"
                .write(
                    toFile: chatty, atomically: true, encoding: .utf8)
            chmod(chatty, 0o755)
            link = try self.link(replicator, server, socket: remote.socket, remoteCommand: chatty)
            try await waitUntil(timeout: 30) { link.isConnected }
            link.stop()
        }
    }
}
