package import SettingsStore

/// A request of the wire protocol (see `docs/PROTOCOL.md`).
package enum WireRequest: Sendable, Equatable {
    /// Opens a session: protocol version, role, and an optional client name.
    case hello(Hello)
    /// Reads one key.
    case get(key: String)
    /// Reads one key's effective value and the version of its stored value, in one answer:
    /// what `settingsd get --with-version` prints for a script's compare-and-set.
    case getVersioned(key: String)
    /// Reads the value stored for a key, without defaults or locks, with its version: what a
    /// compare-and-set compares.
    case getStored(key: String)
    /// Reads several keys.
    case getMany(keys: [String])
    /// Writes one key, if it holds what `precondition` says.
    case set(key: String, value: SettingValue, precondition: SettingPrecondition? = nil)
    /// Writes one key from text the daemon types by the key's schema, as `settingsd set KEY
    /// VALUE` reads VALUE (a key no schema types takes the text as a string).
    case setText(key: String, text: String, precondition: SettingPrecondition? = nil)
    /// Writes and deletes several keys in one transaction, if every precondition holds; a nil
    /// value deletes.
    case setMany(changes: [KeyWrite])
    /// Deletes one key, if it holds what `precondition` says.
    case delete(key: String, precondition: SettingPrecondition? = nil)
    /// Lists keys under a prefix, with their values if asked.
    case list(prefix: String, includeValues: Bool)
    /// Starts receiving change events for the keys `filter` selects; with `since`, first those
    /// numbered after it, replayed from the history.
    case watch(filter: ChangeFilter, since: Int64? = nil)
    /// Stops a watch.
    case unwatch(watch: Int64)
    /// Asks for the daemon's state.
    case status
    /// Asks for the daemon's state after making every hub link compare digests again (what
    /// `sync --wait` asks first: a hand edit of the hub changes no counter).
    case statusVerifyingHubs
    /// Asks for every value as an export document.
    case export
    /// Restores an export document, together with every part staged before it on the same
    /// connection, in one transaction; with `replace`, keys missing from them all are deleted
    /// (only those under one of `replacingUnder`'s prefixes, when it names any).
    case `import`(document: ExportDocument, replace: Bool, replacingUnder: [String] = [])
    /// Stages part of a document for the `import` that follows on this connection, so a document
    /// larger than one frame can be imported whole (see `BlockingClient.importDocument`).
    case importPart(document: ExportDocument)
    /// Describes a key: its schema rule, lock, system default, effective value and its source.
    case describe(key: String)
    /// Lists the keys the schemas declare (patterns included) with their effective values.
    case schema
    /// Returns a key, or every key under a prefix ending in `.`, or every key (`""`, sent as
    /// `"all": true`), to its defaults (a delete).
    case reset(keyOrPrefix: String)
    /// The history records a query selects, newest first.
    case history(HistoryQuery)
    /// Writes a key's value of an earlier version back, as a new write.
    case revert(key: String, version: SettingVersion)
    /// Returns a key or the keys under a prefix to their values at a time (milliseconds since 1970).
    case revertBefore(keyOrPrefix: String, timeMilliseconds: UInt64)
    /// Every value as it was at a time (milliseconds since 1970), as an export document.
    case exportAt(timeMilliseconds: UInt64)

    /// One write of a `setMany`: a value, or nil to delete, and its precondition.
    package typealias KeyWrite = SettingWrite

    /// The most keys or changes one request may carry.
    package static let maximumItems = 10_000

    /// Every operation's name on the wire, as `operation` spells them (`docs/PROTOCOL.md`).
    package static let operations = [
        "hello", "get", "getMany", "set", "setMany", "delete", "list", "watch", "unwatch", "status",
        "export", "import", "importPart", "describe", "schema", "reset", "history", "revert",
    ]

    /// The operation's name on the wire.
    package var operation: String {
        switch self {
        case .hello: "hello"
        case .get, .getVersioned, .getStored: "get"
        case .getMany: "getMany"
        case .set, .setText: "set"
        case .setMany: "setMany"
        case .delete: "delete"
        case .list: "list"
        case .watch: "watch"
        case .unwatch: "unwatch"
        case .status, .statusVerifyingHubs: "status"
        case .export: "export"
        case .import: "import"
        case .importPart: "importPart"
        case .describe: "describe"
        case .schema: "schema"
        case .reset: "reset"
        case .history: "history"
        case .revert, .revertBefore: "revert"
        case .exportAt: "export"
        }
    }
}
