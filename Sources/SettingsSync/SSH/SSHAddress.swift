public import SettingsStore

/// Where an SSH peer is: `ssh://[user@]host[:port][/path/to/remote.sock]`. Without a path the
/// remote bridge dials the remote user's default socket.
///
/// ```swift
/// let address = try SSHAddress("ssh://ana@laptop.local/run/user/1000/settingsd/socket")
/// address.host          // "laptop.local"
/// address.socketPath    // "/run/user/1000/settingsd/socket"
/// ```
public struct SSHAddress: Sendable, Equatable, CustomStringConvertible {
    /// The URL scheme that names an SSH peer.
    public static let scheme = "ssh://"

    /// The login name, or nil for the SSH configuration's.
    public let user: String?
    /// The host name or address, as `ssh` takes it (a name from `~/.ssh/config` works too).
    public let host: String
    /// The port, or nil for the SSH configuration's.
    public let port: Int?
    /// The daemon's socket on the remote machine, or nil for the remote user's default one.
    public let socketPath: String?

    /// Whether `text` names an SSH peer (starts with `ssh://`).
    public static func isSSH(_ text: String) -> Bool {
        text.hasPrefix(scheme)
    }

    /// Parses an `ssh://` address.
    ///
    /// - Throws: `invalidValue` naming what is wrong: another scheme, an empty host, a port out
    ///   of range, or a user or host that `ssh` would read as an option or that holds spaces.
    public init(_ text: String) throws(SettingsError) {
        func invalid(_ reason: String) -> SettingsError {
            SettingsError(.invalidValue, "invalid SSH peer '\(text)': \(reason)")
        }
        guard Self.isSSH(text) else { throw invalid("it must start with \(Self.scheme)") }
        let rest = text.dropFirst(Self.scheme.count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        var hostPort = authority[...]
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at]
            guard Self.isWord(user) else { throw invalid("the user name '\(user)' is not one ssh takes") }
            self.user = String(user)
            hostPort = authority[authority.index(after: at)...]
        } else {
            self.user = nil
        }
        var host = hostPort
        var port: Substring?
        if hostPort.hasPrefix("[") {
            // [IPv6]:port
            guard let close = hostPort.firstIndex(of: "]") else {
                throw invalid("an IPv6 address lacks its ']'")
            }
            host = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected '\(after)' after the address") }
                port = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            port = hostPort[hostPort.index(after: colon)...]
        }
        guard !host.isEmpty else { throw invalid("it names no host") }
        guard Self.isWord(host) else { throw invalid("the host '\(host)' is not one ssh takes") }
        self.host = String(host)
        if let port {
            guard let number = Int(port), (1...65_535).contains(number) else {
                throw invalid("the port '\(port)' is not 1…65535")
            }
            self.port = number
        } else {
            self.port = nil
        }
        if path.isEmpty || path == "/" {
            self.socketPath = nil
        } else {
            guard !path.contains("\0"), !path.contains("\n") else {
                throw invalid("the socket path holds a control character")
            }
            self.socketPath = String(path)
        }
    }

    /// The address as written: `ssh://user@host:port/path`, with only the parts given.
    public var description: String {
        let user = user.map { "\($0)@" } ?? ""
        let host = host.contains(":") ? "[\(host)]" : host
        let port = port.map { ":\($0)" } ?? ""
        return "\(Self.scheme)\(user)\(host)\(port)\(socketPath ?? "")"
    }

    /// A user or host name `ssh` cannot take for an option, and without spaces or control
    /// characters that a remote shell or `ssh` itself would split.
    private static func isWord(_ text: Substring) -> Bool {
        !text.isEmpty && !text.hasPrefix("-")
            && text.unicodeScalars.allSatisfy {
                $0.value > 0x20 && $0.value != 0x7F && !"'\"\\`$;&|<>()".unicodeScalars.contains($0)
            }
    }
}
