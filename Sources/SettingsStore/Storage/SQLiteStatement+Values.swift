extension SQLiteStatement {
    /// The setting value stored in `column` of the current row (`docs/STORAGE.md`, "Value
    /// encoding"); nil for NULL (a tombstone, a deletion).
    ///
    /// - Throws: The decoding error of a malformed value; callers say where it was found.
    func storedValue(at column: Int32) throws(SettingsError) -> SettingValue? {
        guard !isNull(at: column) else { return nil }
        return try withBytes(at: column) { (bytes) throws(SettingsError) in try SettingValue(decoding: bytes)
        }
    }
}
