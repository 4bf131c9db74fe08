package import SettingsStore

/// The one line `settingsd bridge` writes to its standard output before any replica protocol:
/// that it reached its daemon, or why not. The side that started it (an SSH peer) reads the
/// line first, so a remote daemon that is not running reads as that, not as a closed stream.
package enum BridgeBanner: Equatable, Sendable {
    /// The bridge is joined to its daemon's socket: the replica protocol follows.
    case ready
    /// The bridge could not reach its daemon: the error's code and message.
    case refused(SettingsError)

    /// The version of the bridge's framing; a bridge of another version is refused by name.
    package static let version = 1
    /// What every banner line starts with.
    package static let prefix = "settingsd bridge "
    /// The longest banner line read before giving up on the stream.
    package static let maximumLineBytes = 4_096

    /// The banner as written, with its newline.
    package var line: String {
        switch self {
        case .ready:
            return "\(Self.prefix)\(Self.version) ready\n"
        case .refused(let error):
            let message = String(error.message.map { $0.isNewline ? " " : $0 })
            return "\(Self.prefix)\(Self.version) refused \(error.code.rawValue) \(message)\n"
        }
    }

    /// Reads a banner line (without its newline); nil when the line is not a bridge's banner at
    /// all (a login script's greeting, another program).
    ///
    /// - Throws: `unsupportedVersion` for a bridge of another version.
    package init?(line: Substring) throws(SettingsError) {
        guard line.hasPrefix(Self.prefix) else { return nil }
        let fields = line.dropFirst(Self.prefix.count).split(
            separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard let version = fields.first.flatMap({ Int($0) }), fields.count >= 2 else { return nil }
        guard version == Self.version else {
            throw SettingsError(
                .unsupportedVersion,
                "the remote settingsd bridge speaks version \(version), this one \(Self.version): install the same settingsd release on both machines"
            )
        }
        switch fields[1] {
        case "ready" where fields.count == 2:
            self = .ready
        case "refused" where fields.count == 4:
            let code = SettingsError.Code(rawValue: String(fields[2])) ?? .io
            self = .refused(SettingsError(code, String(fields[3])))
        default:
            return nil
        }
    }
}
