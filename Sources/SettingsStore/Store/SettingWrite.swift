/// One write of a transaction: a value, or a removal, and what the key must hold for it.
public struct SettingWrite: Sendable, Hashable {
    /// The key.
    public var key: String
    /// The new value, or nil to remove the key's value.
    public var value: SettingValue?
    /// What the key must hold for the transaction to go ahead (nil: whatever it holds).
    public var precondition: SettingPrecondition?

    /// Creates a write; a nil `value` removes the key's value.
    public init(key: String, value: SettingValue?, if precondition: SettingPrecondition? = nil) {
        self.key = key
        self.value = value
        self.precondition = precondition
    }

    /// Stores `value` for `key`, if it holds what `precondition` says.
    public static func set(
        _ value: SettingValue, forKey key: String, if precondition: SettingPrecondition? = nil
    )
        -> SettingWrite
    {
        SettingWrite(key: key, value: value, if: precondition)
    }

    /// Removes `key`'s value, if it holds what `precondition` says.
    public static func removeValue(forKey key: String, if precondition: SettingPrecondition? = nil)
        -> SettingWrite
    {
        SettingWrite(key: key, value: nil, if: precondition)
    }
}
