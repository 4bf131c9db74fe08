import Testing

@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("SSH peer addresses, the ssh command line and the bridge's banner")
struct SSHAddressTests {
    @Test(
        "ssh:// addresses parse into user, host, port and remote socket, and print back as written",
        arguments: [
            ("ssh://desktop", nil, "desktop", nil, nil),
            ("ssh://ana@desktop", "ana", "desktop", nil, nil),
            ("ssh://ana@desktop:2222", "ana", "desktop", 2222, nil),
            (
                "ssh://desktop/run/user/1000/settingsd/settingsd.sock", nil, "desktop", nil,
                "/run/user/1000/settingsd/settingsd.sock"
            ),
            ("ssh://ana@[::1]:22/tmp/s.sock", "ana", "::1", 22, "/tmp/s.sock"),
            ("ssh://192.168.1.4", nil, "192.168.1.4", nil, nil),
        ] as [(String, String?, String, Int?, String?)])
    func parses(_ text: String, user: String?, host: String, port: Int?, socket: String?) throws {
        let address = try SSHAddress(text)
        #expect(address.user == user)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.socketPath == socket)
        #expect(address.description == text)
        #expect(try SSHAddress(address.description) == address)
    }

    @Test(
        "addresses ssh would misread are refused with the reason",
        arguments: [
            ("desktop", "must start with ssh://"),
            ("ssh://", "names no host"),
            ("ssh://ana@", "names no host"),
            ("ssh://-oProxyCommand=touch%20x", "is not one ssh takes"),
            ("ssh://-x@desktop", "is not one ssh takes"),
            ("ssh://desk top", "is not one ssh takes"),
            ("ssh://desktop:0", "is not 1…65535"),
            ("ssh://desktop:70000", "is not 1…65535"),
            ("ssh://desktop:ssh", "is not 1…65535"),
            ("ssh://[::1", "lacks its ']'"),
            ("ssh://de$(id)sk", "is not one ssh takes"),
        ])
    func refuses(_ text: String, reason: String) {
        #expect {
            _ = try SSHAddress(text)
        } throws: { error in
            (error as? SettingsError)?.code == .invalidValue
                && (error as? SettingsError)?.message.contains(reason) == true
        }
    }

    @Test(
        "the ssh command line: batch mode, options before '--', the host and the quoted remote command after")
    func commandLine() throws {
        let channel = SSHChannel(
            try SSHAddress("ssh://ana@desktop:2222/tmp/it's.sock"), remoteCommand: "/opt/settingsd",
            sshCommand: "ssh -i key")
        let arguments = channel.arguments
        #expect(Array(arguments.prefix(4)) == ["/bin/sh", "-c", "ssh -i key \"$@\"", "ssh"])
        #expect(arguments.contains("BatchMode=yes"))
        let separator = try #require(arguments.firstIndex(of: "--"))
        #expect(
            Array(arguments[separator...]) == [
                "--", "desktop", "/opt/settingsd bridge --socket '/tmp/it'\\''s.sock'",
            ])
        #expect(arguments[..<separator].contains("2222"))
        #expect(arguments[..<separator].contains("ana"))
    }

    @Test("the bridge's banner reads back what it wrote; other lines and versions are told apart")
    func banner() throws {
        #expect(try BridgeBanner(line: BridgeBanner.ready.line.dropLast()) == .ready)
        let refusal = SettingsError(.daemonNotRunning, "no settingsd daemon is listening on '/x'\nat all")
        let read = try BridgeBanner(line: BridgeBanner.refused(refusal).line.dropLast())
        #expect(
            read
                == .refused(
                    SettingsError(.daemonNotRunning, "no settingsd daemon is listening on '/x' at all")))
        #expect(try BridgeBanner(line: "Welcome to the remote machine") == nil)
        #expect(try BridgeBanner(line: "settingsd bridge 1 sideways") == nil)
        #expect(throws: SettingsError.self) { try BridgeBanner(line: "settingsd bridge 2 ready") }
    }

    @Test("ssh's own words become reasons a user acts on")
    func failures() throws {
        let address = try SSHAddress("ssh://ana@desktop")
        func reason(_ output: String, status: Int32? = 255 << 8) -> SettingsError {
            SSHFailure.error(output: output, status: status, address: address, remoteCommand: "settingsd")
        }
        #expect(reason("Host key verification failed.").message.contains("host key of desktop is unknown"))
        #expect(
            reason("ana@desktop: Permission denied (publickey).").message.contains(
                "refused the SSH login as ana"))
        #expect(reason("ssh: connect to host desktop port 22: Connection refused").code == .daemonNotRunning)
        #expect(
            reason("ssh: Could not resolve hostname desktop: Name or service not known").message.contains(
                "not known"))
        #expect(
            reason("sh: 1: settingsd: not found", status: 127 << 8).message.contains(
                "'settingsd' is not found on desktop"))
        #expect(reason("Error: unknown command 'bridge'", status: 64 << 8).code == .unsupportedVersion)
        #expect(reason("", status: 9).message.contains("killed by signal 9"))
    }
}
