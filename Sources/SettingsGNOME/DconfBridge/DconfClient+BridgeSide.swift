import SettingsStore

/// dconf as a bridge's side: values carry their own types; writes are tagged.
extension DconfClient: BridgeSide {
    func userValue(at path: String, type: GVariantType?) throws(SettingsError) -> GVariant? {
        try userValue(at: path)
    }

    func lastModified(notAfter now: UInt64) -> UInt64? {
        DconfUserDatabase.lastModified(notAfter: now)
    }
}
