import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A TCP listener on 127.0.0.1 that answers libpq's TLS request with `N`, as a machine in the
/// middle refusing TLS would, and records what the client sends after that.
private final class TLSRefuser: Sendable {
    let port: UInt16
    private let fd: Int32
    private let received = Mutex<[UInt8]?>(nil)

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else {
            close(listener)
            throw SettingsError(.io, "cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        fd = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            var timeout = timeval(tv_sec: 3, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var request = [UInt8](repeating: 0, count: 8)
            guard recv(client, &request, 8, Int32(MSG_WAITALL)) == 8 else { return }
            _ = send(client, [UInt8(ascii: "N")], 1, Int32(MSG_NOSIGNAL))
            var after = [UInt8](repeating: 0, count: 4096)
            let count = recv(client, &after, after.count, 0)
            received.withLock { $0 = Array(after.prefix(max(0, count))) }
        }
    }

    deinit {
        close(fd)
    }

    /// What the client sent after hearing `N` (nil until the exchange is over).
    var afterRefusal: [UInt8]? { received.withLock { $0 } }
}

extension HubReliability {
    /// No credential leaks: secret options never show, libpq's messages never echo them, a
    /// password on the command line leaves the daemon's arguments, and no hub link falls back
    /// to plaintext over TCP.
    @Suite(
        "PostgreSQL hub: credentials and TLS",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubCredentialsTests {
        let directory = TemporaryDirectory()

        @Test("sslpassword and password never show in status or status --json")
        func secretOptionsAreRedacted() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("redact")
            let url = cluster.conninfo(user: role.name, password: role.password) + " sslpassword=Sslsecret42"
            let daemon = try DaemonProcess(directory, arguments: ["--hub", url])
            try await waitUntil(timeout: 60) { try daemon.status().hubs.first?.isConnected == true }
            for form in [["status"], ["status", "--json"]] {
                let output = daemon.cli(form[0], Array(form.dropFirst())).output
                #expect(!output.contains("Sslsecret42") && !output.contains(role.password), "\(form)")
                #expect(output.contains("user=\(role.name)"), "\(form)")
            }
            #expect(!PostgresConnectionString.redacted(url).contains("Sslsecret42"))
        }

        @Test("a URL libpq cannot parse is refused without repeating its password")
        func parseErrorsKeepSecrets() {
            let result = DaemonProcess.run([
                "run", "--hub", "postgresql://alice:Hunter%ZZ2@db.example.org/settings",
                "--db", directory.file("p.sqlite"), "--socket", directory.file("p.sock"),
            ])
            #expect(result.status != 0)
            #expect(result.error.contains("cannot be parsed"), "\(result.error)")
            #expect(!result.error.contains("Hunter"), "\(result.error)")
        }

        @Test(
            "a password in --hub is warned about and kept out of the daemon's arguments; the daemon still syncs"
        )
        func passwordLeavesTheArguments() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("argv")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let daemon = try DaemonProcess(directory, arguments: ["--hub", url])
            let arguments = try String(
                contentsOfFile: "/proc/\(daemon.process.processIdentifier)/cmdline", encoding: .utf8)
            #expect(arguments.contains("--db"))
            #expect(!arguments.contains(role.password))
            #expect(daemon.cli("set", "through.env", "1").status == 0)
            #expect(daemon.cli("sync", "--wait", "--timeout", "20").status == 0)
        }

        @Test("a TCP hub that refuses TLS is not spoken to in plaintext (libpq's prefer would)")
        func noPlaintextFallback() async throws {
            let refuser = try TLSRefuser()
            let store = Settings(inMemoryWith: .init())
            let link = try store.sync(
                withHub: HubConfiguration(
                    url: "host=127.0.0.1 port=\(refuser.port) user=alice dbname=settings"))
            defer { link.stop() }
            try await waitUntil(timeout: 60) { link.status.lastError != nil }
            #expect(link.status.lastError?.contains("SSL") == true, "\(link.status.lastError ?? "")")
            try await waitUntil(timeout: 10) { refuser.afterRefusal != nil }
            // The start-up message names the user: after the refusal nothing may follow.
            #expect(refuser.afterRefusal?.isEmpty == true)
        }

        @Test("TCP without verify-full is warned about; Unix sockets and verify-full are not")
        func transportWarnings() {
            let warning = PostgresConnectionString.transportWarning
            #expect(warning("host=db.example.org user=alice")?.contains("sslmode=require") == true)
            #expect(
                warning("postgresql://alice@db.example.org/settings?sslmode=prefer")?.contains("plaintext")
                    == true)
            #expect(warning("host=db.example.org sslmode=verify-full") == nil)
            #expect(warning("host=/run/postgresql user=alice") == nil)
            #expect(warning("hostaddr=10.0.0.1 sslmode=disable")?.contains("plaintext") == true)
        }
    }
}
