/// An error raised by a settings store, with a stable code, a one-line message and its context.
///
/// Printed, it reads as one line, for example
/// `type mismatch for 'ui.theme': stored string, expected Bool`.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable identifier for the kind of failure, suitable for matching and for the wire.
    ///
    /// A struct rather than an enum, so that later versions can add codes without breaking a
    /// `switch` over them: match with `==` or `case .invalidKey:` and keep a `default:`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, CaseIterable {
            case invalidKey
            case invalidValue
            case typeMismatch
            case limitExceeded
            case databaseInUse
            case corruptDatabase
            case unsupportedSchema
            case readOnly
            case diskFull
            case io
            case sqlite
            case closed
            case protocolError
            case frameTooLarge
            case unknownOperation
            case unsupportedVersion
            case tooManyItems
            case overloaded
            case daemonNotRunning
            case accessDenied
            case connectionLost
            case timeout
            case replicaForked
            case schemaViolation
            case locked
            case accountMismatch
            case sealMismatch
            case historyCompacted
            case versionMismatch
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// Every code this version knows, in declaration order.
        package static var all: [Code] { Kind.allCases.map(Code.init) }

        /// Whether the code arises only in a client, while a store opens or in a sync link, never in an answer
        /// or event of a daemon (`docs/PROTOCOL.md` lists the others).
        package var isLocal: Bool {
            switch kind {
            case .daemonNotRunning, .connectionLost, .databaseInUse, .unsupportedSchema, .sealMismatch: true
            default: false
            }
        }

        /// The code's name on the wire, for example `invalidKey`.
        public var rawValue: String { kind.rawValue }

        /// The code named `rawValue`, or nil when this version does not know it.
        package init?(rawValue: String) {
            guard let kind = Kind(rawValue: rawValue) else { return nil }
            self.kind = kind
        }

        /// The code's name.
        public var description: String { rawValue }

        /// A key name is empty, too long for the limits, or contains control characters.
        public static let invalidKey = Code(.invalidKey)
        /// A value cannot be represented, for example an unsigned integer above `Int64.max`.
        public static let invalidValue = Code(.invalidValue)
        /// A stored value has another type than the one requested.
        public static let typeMismatch = Code(.typeMismatch)
        /// A write would break one of the store's limits; nothing was changed.
        public static let limitExceeded = Code(.limitExceeded)
        /// Another live store (in this or another process) holds the database file.
        public static let databaseInUse = Code(.databaseInUse)
        /// The file is not a SQLite database, or it is damaged.
        public static let corruptDatabase = Code(.corruptDatabase)
        /// The database was written by a newer version of this library.
        public static let unsupportedSchema = Code(.unsupportedSchema)
        /// The database or its folder cannot be written.
        public static let readOnly = Code(.readOnly)
        /// The disk is full.
        public static let diskFull = Code(.diskFull)
        /// A file-system operation failed.
        public static let io = Code(.io)
        /// SQLite reported another failure.
        public static let sqlite = Code(.sqlite)
        /// The store was closed and cannot be used any more.
        public static let closed = Code(.closed)
        /// A message on the wire is malformed: bad JSON, wrong field types, missing fields.
        public static let protocolError = Code(.protocolError)
        /// A frame is larger than the connection's maximum; the connection is closed.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// The request names an operation the daemon does not know.
        public static let unknownOperation = Code(.unknownOperation)
        /// The peer speaks a protocol version this side does not.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A request lists more items than one request may carry.
        public static let tooManyItems = Code(.tooManyItems)
        /// The connection's outbound buffer is full (a watcher that does not read); it is closed.
        public static let overloaded = Code(.overloaded)
        /// No daemon answers on the socket.
        public static let daemonNotRunning = Code(.daemonNotRunning)
        /// The daemon refused the connection (another user, or a policy).
        public static let accessDenied = Code(.accessDenied)
        /// The connection to the daemon broke before the answer came.
        public static let connectionLost = Code(.connectionLost)
        /// No answer came in time.
        public static let timeout = Code(.timeout)
        /// A replica's history forked (its file was restored from a backup or copied): it takes
        /// a new replica id and resyncs.
        public static let replicaForked = Code(.replicaForked)
        /// A value breaks its key's schema (type, range, choices, length), or a strict store
        /// has no schema for the key.
        public static let schemaViolation = Code(.schemaViolation)
        /// The key is locked by the administrator (`locks.d`): its value cannot be changed here.
        public static let locked = Code(.locked)
        /// A replica's hello: the two replicas sync as different hub namespaces, and the one
        /// that would have to move cannot (its own hub link holds it to its namespace).
        public static let accountMismatch = Code(.accountMismatch)
        /// A sync target (a hub namespace, a synced folder) is end-to-end encrypted under another
        /// key than this machine's, or this machine would sync it plain (it holds no sync key, or
        /// the target is marked plain here): nothing is read or written there.
        public static let sealMismatch = Code(.sealMismatch)
        /// A watch asked for the changes since a sequence number the history no longer reaches
        /// (pruned by its retention, or off): they cannot be replayed. The error's
        /// `oldestReplayableSequence` says from where they can.
        public static let historyCompacted = Code(.historyCompacted)
        /// A write's precondition failed (`SettingPrecondition`): a key held another version than
        /// the one required, or a value where none was. Nothing of the request was written; the
        /// error's `currentVersions` says what the keys hold.
        public static let versionMismatch = Code(.versionMismatch)
    }

    /// Whether the store could not persist a change for reasons of its own (a full disk, a
    /// read-only or failing file), not because of what was asked: the same request may succeed
    /// later.
    package var isStorageFailure: Bool {
        [.diskFull, .io, .sqlite, .readOnly].contains(code)
    }

    /// The kind of failure.
    public let code: Code
    /// The one-line human-readable message, context included.
    public let message: String
    /// The setting key involved, when there is one.
    public let key: String?
    /// The file involved, when there is one.
    public let path: String?
    /// The SQL statement involved, when there is one.
    public let sql: String?
    /// For `historyCompacted`: the oldest sequence number a watch can start from (its changes
    /// after it are all still in the history).
    public package(set) var oldestReplayableSequence: Int64? = nil
    /// For `versionMismatch`: each key whose precondition failed, with the version it holds as
    /// text (nil: it holds no value); `currentVersions` reads them.
    package var versionTexts: [String: String?] = [:]

    /// Creates an error; prefer the static factories, which word the message consistently.
    public init(_ code: Code, _ message: String, key: String? = nil, path: String? = nil, sql: String? = nil)
    {
        self.code = code
        self.message = message
        self.key = key
        self.path = path
        self.sql = sql
    }

    /// The message, followed by the SQL statement when one was involved.
    public var description: String {
        guard let sql else { return message }
        return "\(message) (SQL: \(sql))"
    }
}

extension SettingsError {
    package static func invalidKey(_ key: String, _ reason: String) -> SettingsError {
        SettingsError(.invalidKey, "invalid key '\(key.debugDescriptionTruncated)': \(reason)", key: key)
    }

    static func closed(path: String) -> SettingsError {
        SettingsError(.closed, "the store for '\(path)' is closed", path: path)
    }

    /// The same error, with the key filled in when it was not known where the error was made.
    package func with(key: String) -> SettingsError {
        guard self.key == nil else { return self }
        let mismatch = "type mismatch"
        let message =
            self.message.hasPrefix(mismatch)
            ? "\(mismatch) for '\(key)'\(self.message.dropFirst(mismatch.count))"
            : "\(self.message) (key '\(key)')"
        var error = SettingsError(code, message, key: key, path: path, sql: sql)
        error.oldestReplayableSequence = oldestReplayableSequence
        error.versionTexts = versionTexts
        return error
    }
}

extension String {
    /// A quoted-safe rendering for messages: control characters escaped, at most 80 characters.
    package var debugDescriptionTruncated: String {
        let escaped = unicodeScalars.map {
            $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0)
        }.joined()
        return escaped.count > 80 ? String(escaped.prefix(80)) + "…" : escaped
    }
}
