/// Why keys changed, as `NSUbiquitousKeyValueStoreChangeReasonKey` tells an app.
public enum ChangeReason: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// A write through this store: `set`, `removeValue`, `update` or a `transaction`.
    case local
    /// The store, or the keys under a prefix, were reset, so reads return defaults again.
    case reset
    /// Keys were given back earlier values from the history (`revert`).
    case revert
    /// Values were restored from an exported document.
    case `import`
    /// Another replica's writes arrived through sync.
    case replica
    /// The first catch-up with a peer this replica had never synced with.
    case initialSync
    /// The store moved to another hub namespace: its synced keys were replaced by the new
    /// namespace's contents, whatever their versions (keys of scope `local` stay), as
    /// `NSUbiquitousKeyValueStore` does when the iCloud account changes.
    case accountChange
    /// An incoming change was refused because it would break a local limit; the key is unchanged.
    case quotaViolation
    /// An incoming change was refused because it breaks the key's schema; the key is unchanged.
    case schemaViolation
    /// The administrator's schemas, system defaults or locks changed the key's effective value.
    case system
    /// A `SettingsClient` reconnected to its daemon and could not replay what it missed (the
    /// daemon's history no longer reaches back that far, or it is another store): re-read what
    /// you show. Carries no keys. A reconnection that can replay delivers the missed changes
    /// instead, and says nothing of this.
    case resync

    /// The raw name.
    public var description: String { rawValue }
}
