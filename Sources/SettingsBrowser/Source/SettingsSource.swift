package import SettingsDaemonClient
package import SettingsStore
import SettingsWire

/// Where the browser's keys come from and its edits go: a daemon over its socket (live, through
/// a second connection that watches every key), or a database file opened read-only in this
/// process (`--db`, no live changes). Every request is one the command line sends too.
package final class SettingsSource {
    private let service: any SettingsService
    private var watcher: BlockingClient?
    /// What it reads: the socket's path, or the database file's.
    package let location: String
    /// Whether writes are refused here (a database file opened read-only).
    package let isReadOnly: Bool

    /// A source on a daemon: requests through `service`, changes through `watcher`.
    package init(daemon service: BlockingClient, watcher: BlockingClient) throws(SettingsError) {
        self.service = service
        self.watcher = watcher
        location = service.socketPath
        isReadOnly = false
        try watcher.request(.watch(filter: .all))
    }

    /// A source on a database file opened read-only through `service`.
    package init(file service: any SettingsService, path: String) {
        self.service = service
        watcher = nil
        location = path
        isReadOnly = true
    }

    /// The descriptor to poll for changes, when it has one.
    package var changeDescriptor: Int32? { watcher?.descriptor }

    /// Every key's name and the schemas in force (values are read as they are needed).
    package func catalog() throws(SettingsError) -> KeyCatalog {
        KeyCatalog(
            keys: try service.list(prefix: "", includeValues: false).keys,
            schemaEntries: try service.schemaEntries())
    }

    /// The values stored for `keys` (at most `WireRequest.maximumItems`); keys without one are absent.
    package func values(forKeys keys: [String]) throws(SettingsError) -> [String: SettingValue] {
        try service.values(forKeys: keys)
    }

    /// Everything known about `key`.
    package func describe(_ key: String) throws(SettingsError) -> KeyDescription {
        try service.describe(key)
    }

    /// `key`'s history, newest first.
    package func history(_ key: String, limit: Int = 50) throws(SettingsError) -> [HistoryRecord] {
        try service.history(HistoryQuery(keyOrPrefix: key, limit: limit))
    }

    /// The replica's state, for the sync view.
    package func status() throws(SettingsError) -> DaemonStatus {
        try service.status()
    }

    /// Writes `text` to `key`, typed as the daemon types a `set` of text.
    package func set(text: String, forKey key: String) throws(SettingsError) {
        try refuseIfReadOnly()
        _ = try service.answer(.setText(key: key, text: text))
    }

    /// Writes `changes` in one transaction: all or none.
    package func write(_ changes: [SettingWrite]) throws(SettingsError) {
        try refuseIfReadOnly()
        _ = try service.answer(.setMany(changes: changes))
    }

    /// Removes `key`'s value.
    package func delete(_ key: String) throws(SettingsError) {
        try refuseIfReadOnly()
        try service.removeValue(forKey: key)
    }

    /// Returns every key under `prefix` (ending in `.`) to its default; returns how many changed.
    package func reset(_ prefix: String) throws(SettingsError) -> Int {
        try refuseIfReadOnly()
        return try service.reset(prefix).count
    }

    /// Stops listening for changes (the connection broke).
    package func stopWatching() {
        watcher = nil
    }

    /// Writes back `key`'s value of `version`.
    package func revert(_ key: String, to version: SettingVersion) throws(SettingsError) {
        try refuseIfReadOnly()
        try service.revert(key, to: version)
    }

    /// The changes that have arrived, without waiting.
    package func arrivedChanges() throws(SettingsError) -> [SettingsChange] {
        guard let watcher else { return [] }
        var changes: [SettingsChange] = []
        while let event = try watcher.arrivedEvent() { changes.append(event.change) }
        return changes
    }

    private func refuseIfReadOnly() throws(SettingsError) {
        guard isReadOnly else { return }
        throw SettingsError(
            .readOnly, "'\(location)' is open read-only; browse through the daemon to change it",
            path: location)
    }
}
