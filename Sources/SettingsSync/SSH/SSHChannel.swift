public import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// A replica on another machine, reached over SSH (`settingsd run --peer ssh://host`): the link
/// starts the user's own `ssh` (their configuration, agent and `known_hosts`; batch mode, so it
/// never prompts), which runs `settingsd bridge` on the remote machine; the bridge joins the
/// stream to the remote daemon's socket. No port is opened anywhere and SSH does the
/// authentication; the replica protocol on top is the one a socket peer speaks.
///
/// ```swift
/// let channel = try SSHChannel(SSHAddress("ssh://ana@desktop"))
/// let link = replicator.sync(over: channel)   // reconnects with backoff, like a socket peer
/// ```
///
/// `$SETTINGSD_SSH_COMMAND` replaces `ssh` (shell words, as git's `GIT_SSH_COMMAND`:
/// `ssh -i ~/.ssh/settings -o UserKnownHostsFile=…`).
public struct SSHChannel: ReplicaChannel {
    /// Where the replica is.
    public let remote: SSHAddress
    /// The command run on the remote machine to reach `settingsd` (shell text; `settingsd` from
    /// the remote `PATH` by default).
    public let remoteCommand: String
    /// The local command that opens the SSH connection (shell text, `ssh` by default).
    public let sshCommand: String
    /// How long `ssh` has to log in and the bridge to answer before the attempt fails.
    public let connectTimeout: Duration

    /// The environment variable that replaces the `ssh` command.
    public static let sshCommandVariable = "SETTINGSD_SSH_COMMAND"

    /// The channel to the replica at `remote`.
    ///
    /// - Parameters:
    ///   - remote: The machine (and user, port) to log in to.
    ///   - remoteCommand: What runs `settingsd` on the remote machine (default `settingsd`).
    ///   - sshCommand: The local SSH command; nil reads `$SETTINGSD_SSH_COMMAND`, else `ssh`.
    ///   - connectTimeout: How long logging in and the bridge's answer may take (30 s).
    public init(
        _ remote: SSHAddress, remoteCommand: String = "settingsd", sshCommand: String? = nil,
        connectTimeout: Duration = .seconds(30)
    ) {
        self.remote = remote
        self.remoteCommand = remoteCommand
        self.sshCommand =
            sshCommand ?? getenv(Self.sshCommandVariable).map { String(cString: $0) }.flatMap {
                $0.isEmpty ? nil : $0
            }
            ?? "ssh"
        self.connectTimeout = connectTimeout
    }

    /// The `ssh://` address, as `status` names the link.
    public var address: String { remote.description }

    /// Starts `ssh` and waits for the remote bridge's banner.
    ///
    /// - Throws: Why the link is not up, in words: an unknown or changed host key, a refused
    ///   login, no SSH server, a missing or too old remote `settingsd`, a remote daemon that is
    ///   not running, or `timeout`.
    public func open() throws(SettingsError) -> Int32 {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        else {
            throw SettingsError(.io, "cannot make a socket pair for ssh to \(remote.host) (errno \(errno))")
        }
        let process: SSHProcess
        do throws(SettingsError) {
            process = try SSHProcess.spawn(arguments, stream: pair[1])
        } catch {
            close(pair[0])
            close(pair[1])
            throw error
        }
        close(pair[1])
        let banner: BridgeBanner?
        do throws(SettingsError) {
            banner = try readBanner(pair[0])
        } catch {
            close(pair[0])
            _ = process.finish(within: .seconds(1))
            throw error
        }
        switch banner {
        case .ready:
            return pair[0]
        case .refused(let refusal):
            close(pair[0])
            _ = process.finish(within: .seconds(5))
            throw SettingsError(refusal.code, "on \(remote.host): \(refusal.message)")
        case nil:
            close(pair[0])
            let status = process.finish(within: .seconds(5))
            throw SSHFailure.error(
                output: process.errorOutput, status: status, address: remote, remoteCommand: remoteCommand)
        }
    }

    /// `sh -c 'SSH "$@"' ssh OPTIONS -- HOST COMMAND`: the SSH command is shell words, as git
    /// runs `GIT_SSH_COMMAND`; the host and the remote command are single arguments after `--`.
    var arguments: [String] {
        var options = [
            "-T", "-x", "-o", "BatchMode=yes", "-o", "ConnectTimeout=\(max(1, Int(connectTimeout.seconds)))",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
        ]
        if let port = remote.port { options += ["-p", String(port)] }
        if let user = remote.user { options += ["-l", user] }
        var command = "\(remoteCommand) bridge"
        if let path = remote.socketPath { command += " --socket \(Self.shellQuoted(path))" }
        return ["/bin/sh", "-c", "\(sshCommand) \"$@\"", "ssh"] + options + ["--", remote.host, command]
    }

    /// Reads lines until the bridge's banner (skipping what a login script printed first); nil
    /// when the stream ends before one.
    private func readBanner(_ fd: Int32) throws(SettingsError) -> BridgeBanner? {
        let deadline = ContinuousClock.now + connectTimeout
        var line: [UInt8] = []
        var skipped = 0
        while true {
            let left = deadline - .now
            guard left > .zero else {
                throw SettingsError(
                    .timeout,
                    "ssh to \(remote.host) did not log in and reach the remote settingsd in \(connectTimeout.seconds) s"
                )
            }
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, Int32(left.milliseconds(clampedTo: 1...60_000)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return nil }
            guard byte == UInt8(ascii: "\n") else {
                if line.count < BridgeBanner.maximumLineBytes { line.append(byte) }
                continue
            }
            if let banner = try BridgeBanner(line: Substring(String(decoding: line, as: UTF8.self))) {
                return banner
            }
            skipped += line.count + 1
            line.removeAll(keepingCapacity: true)
            guard skipped <= 65_536 else {
                throw SettingsError(
                    .protocolError,
                    "\(remote.host) printed more than 64 KiB before the settingsd bridge answered: is '\(remoteCommand)' settingsd, and does a login script print to standard output?"
                )
            }
        }
    }

    /// `text` in single quotes for a POSIX shell.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
