/// Settings an app reads and watches, wherever they live: a store in the app's own file
/// (`Settings`) or a settingsd daemon (`SettingsClient`). Write code generic over it, and choose
/// where the settings live in one place.
///
/// ```swift
/// func theme(in settings: some SettingsReading) async throws -> String {
///     try await settings.value(for: SettingKey("ui.theme", default: "light"))
/// }
/// ```
public protocol SettingsReading: Sendable {
    /// The effective value of `key`: stored, or its default; nil when it has neither.
    func value(forKey key: String) async throws(SettingsError) -> SettingValue?

    /// The value stored for `key` with the version that wrote it; nil when none is stored (a
    /// default alone does not count). What a `SettingPrecondition` compares.
    func versionedValue(forKey key: String) async throws(SettingsError) -> VersionedValue?

    /// The value of a typed key, or its default.
    func value<Value>(for key: SettingKey<Value>) async throws(SettingsError) -> Value

    /// The keys holding values under `prefix`, sorted.
    func keys(withPrefix prefix: String) async throws(SettingsError) -> [String]

    /// What locks `key` (the `locks.d` file, or the hub's mandatory policy), or nil when the
    /// key can be written; grey out what cannot.
    func lockingFile(forKey key: String) async throws(SettingsError) -> String?

    /// The changes of the keys `filter` selects: first those numbered after `sequence`, replayed
    /// from the history (nil: none), then each as it is committed, with no gap and no change
    /// twice. Each change's `sequence` is where to resume from.
    ///
    /// - Throws: `historyCompacted` when the history no longer reaches back to `sequence`.
    func changes(_ filter: ChangeFilter, since sequence: Int64?) async throws(SettingsError)
        -> AsyncThrowingStream<SettingsChange, any Error>
}

extension SettingsReading {
    /// Whether `key` can be written (no lock or mandatory policy holds it), as GSettings'
    /// `is_writable`.
    public func isWritable(forKey key: String) async throws(SettingsError) -> Bool {
        try await lockingFile(forKey: key) == nil
    }
}
