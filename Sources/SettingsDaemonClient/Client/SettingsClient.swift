public import SettingsStore
public import SettingsWire
import Synchronization

/// An asynchronous connection to a settingsd daemon, for apps.
///
/// ```swift
/// let client = try await SettingsClient.connect()          // default socket
/// try await client.set(0.7, forKey: "audio.volume")        // returns once durable
/// let volume = try await client.value(forKey: "audio.volume")
/// for try await change in try await client.watch(.prefixes(["audio."])) { print(change.keys) }
/// ```
///
/// It conforms to `SettingsWriting`, as `Settings` does: code generic over the protocol runs on a
/// store in the app's own file or on a daemon alike.
///
/// Reconnection: by default the client reconnects with backoff (0.1 s doubling to 5 s) when the
/// connection breaks, and registers its watches again from the last change each delivered: the
/// daemon replays what they missed, in order, then they go on live. Only when it cannot (its
/// history no longer reaches back so far, or another store answers) does a watch receive one
/// change with reason `resync` and no keys instead: re-read what you show. Requests in flight
/// when it broke, and requests made while it is down, throw `connectionLost`; nothing is
/// retried for you (`update(_:_:)` retries only a compare-and-set that lost).
public final class SettingsClient: SettingsWriting {
    private let connection: ClientConnection

    private init(connection: ClientConnection) {
        self.connection = connection
    }

    /// Connects to the daemon at `socketPath` and says hello.
    ///
    /// - Parameters:
    ///   - socketPath: The daemon's socket.
    ///   - reconnects: Whether to reconnect after the connection breaks (see above); without it,
    ///     watches end with `connectionLost` and the client stays closed.
    /// - Throws: `SettingsError` with code `daemonNotRunning` when nothing listens there.
    public static func connect(to socketPath: String = SettingsPaths.socket, reconnects: Bool = true)
        async throws(SettingsError) -> SettingsClient
    {
        SettingsClient(connection: try await ClientConnection.connect(to: socketPath, reconnects: reconnects))
    }

    /// Closes the connection; pending requests fail and watches end.
    public func close() {
        connection.close()
    }

    /// Sends any request and returns the response's fields (the typed methods wrap it).
    package func send(_ request: WireRequest) async throws(SettingsError) -> [String: JSONValue] {
        try await connection.send(request)
    }

    /// The effective value of `key` (stored, or its default), or nil.
    public func value(forKey key: String) async throws(SettingsError) -> SettingValue? {
        let fields = try await send(.get(key: key))
        guard case .bool(true)? = fields["found"], let json = fields["value"] else { return nil }
        return try SettingValue(json: json)
    }

    /// The value stored for `key` with its version, or nil when none is stored.
    public func versionedValue(forKey key: String) async throws(SettingsError) -> VersionedValue? {
        try VersionedValue(getAnswer: try await send(.getStored(key: key)), key: key)
    }

    /// What locks `key` (the `locks.d` file, or the hub's mandatory policy), or nil when it can
    /// be written (`describe`).
    public func lockingFile(forKey key: String) async throws(SettingsError) -> String? {
        guard case .string(let file)? = try await send(.describe(key: key))["lockedBy"] else { return nil }
        return file
    }

    /// The values stored for `keys` (at most `WireRequest.maximumItems`); keys without one are absent.
    public func values(forKeys keys: [String]) async throws(SettingsError) -> [String: SettingValue] {
        try storedValues(inGetManyAnswer: try await send(.getMany(keys: keys)))
    }

    /// The value of a typed key, or its default.
    public func value<Value>(for key: SettingKey<Value>) async throws(SettingsError) -> Value {
        try key.value(from: try await value(forKey: key.name))
    }

    /// Stores `value` for `key`; returns once the daemon has made it durable.
    public func set<Value: SettingValueConvertible>(_ value: Value, forKey key: String)
        async throws(SettingsError)
    {
        guard let stored = try value.settingValue() else {
            try await removeValue(forKey: key)
            return
        }
        _ = try await send(.set(key: key, value: stored))
    }

    /// Stores `value` for a typed key; `nil` of an optional removes it.
    public func set<Value>(_ value: Value, for key: SettingKey<Value>) async throws(SettingsError) {
        do throws(SettingsError) {
            try await set(value, forKey: key.name)
        } catch {
            throw error.with(key: key.name)
        }
    }

    /// Applies `writes` in one transaction (`setMany`) if every precondition holds; durable when
    /// this returns.
    ///
    /// - Throws: `versionMismatch` naming every key whose precondition failed (nothing is
    ///   written; the error's `currentVersions` says what they hold), and what a write may throw.
    public func write(_ writes: [SettingWrite]) async throws(SettingsError) {
        guard writes.count == 1, let write = writes.first else {
            _ = try await send(.setMany(changes: writes))
            return
        }
        if let value = write.value {
            _ = try await send(.set(key: write.key, value: value, precondition: write.precondition))
        } else {
            _ = try await send(.delete(key: write.key, precondition: write.precondition))
        }
    }

    /// Reads `key`, lets `body` change its value and writes it back by compare-and-set: when
    /// another write of the key came in between, it reads again and retries (up to 1,000 times),
    /// so concurrent updates from any number of processes never lose one. Returns the value
    /// written.
    ///
    /// ```swift
    /// try await client.update(SettingKey("jobs.done", default: 0)) { $0 += 1 }
    /// ```
    @discardableResult
    public func update<Value>(_ key: SettingKey<Value>, _ body: (inout Value) throws -> Void) async throws
        -> Value
    {
        try await compareAndSet(key, attempts: 1_000, body)
    }

    /// Removes `key`; returns whether it held a value.
    @discardableResult
    public func removeValue(forKey key: String) async throws(SettingsError) -> Bool {
        let fields = try await send(.delete(key: key))
        return fields["existed"] == .bool(true)
    }

    /// The keys under `prefix`, sorted.
    public func keys(withPrefix prefix: String = "") async throws(SettingsError) -> [String] {
        let fields = try await send(.list(prefix: prefix, includeValues: false))
        guard case .array(let keys)? = fields["keys"] else { return [] }
        return keys.compactMap { if case .string(let key) = $0 { key } else { nil } }
    }

    /// The daemon's status.
    package func status() async throws(SettingsError) -> DaemonStatus {
        try DaemonStatus(fields: try await send(.status))
    }

    /// Every value, as an export document.
    public func export() async throws(SettingsError) -> ExportDocument {
        try ExportDocument(json: try await send(.export)["document"] ?? .null)
    }

    /// Restores an export document in one transaction.
    public func importDocument(_ document: ExportDocument, replacingExisting: Bool = false)
        async throws(SettingsError)
    {
        _ = try await send(.import(document: document, replace: replacingExisting))
    }

    /// The changes of the keys `filter` selects, until the task is cancelled or the connection
    /// ends: with `since`, first those numbered after it, replayed from the daemon's history.
    /// Keep the last change's `sequence` to resume from after the app restarts.
    ///
    /// - Throws: `historyCompacted` when the daemon's history no longer reaches back to `since`
    ///   (the error's `oldestReplayableSequence` says how far it does).
    public func watch(_ filter: ChangeFilter = .all, since: Int64? = nil) async throws(SettingsError)
        -> AsyncThrowingStream<SettingsChange, any Error>
    {
        try await connection.watch(filter, since: since)
    }

    /// The changes of the keys `filter` selects, after `since` first (`watch(_:since:)`).
    public func changes(_ filter: ChangeFilter, since sequence: Int64?) async throws(SettingsError)
        -> AsyncThrowingStream<SettingsChange, any Error>
    {
        try await watch(filter, since: sequence)
    }
}
