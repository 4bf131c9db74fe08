#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small stderr logger: `level: message` lines, or syslog `<N>` prefixes under journald, and
/// never colour codes.
public struct SettingsLogger: Sendable {
    /// How important a message is.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        /// Detail for debugging: every connection and request.
        case debug
        /// Normal events: start, stop, listening address.
        case info
        /// Something unusual but handled: a refused client, a closed slow watcher.
        case warning
        /// A failure.
        case error

        /// The name used by `--log-level`.
        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        /// Parses a `--log-level` name.
        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        /// Order of importance.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        fileprivate var syslogPriority: Int {
            switch self {
            case .debug: 7
            case .info: 6
            case .warning: 4
            case .error: 3
            }
        }
    }

    /// Messages below this level are dropped.
    public let minimumLevel: Level
    private let journald: Bool

    /// A logger writing messages at `minimumLevel` and above to stderr.
    public init(minimumLevel: Level = .info) {
        self.minimumLevel = minimumLevel
        // systemd sets JOURNAL_STREAM when stderr goes to the journal, which reads `<N>` priorities.
        self.journald = getenv("JOURNAL_STREAM") != nil
    }

    /// Writes `message` if `level` is at least `minimumLevel`.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        var line = journald ? "<\(level.syslogPriority)>\(message())\n" : "\(level.name): \(message())\n"
        // One write(2) per line, so lines from several threads never interleave.
        _ = line.withUTF8 { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
