/// Checks a key name: non-empty UTF-8, no control characters, at most `maximumBytes` bytes (and
/// never over 16 MiB, the longest key the in-memory index holds, whatever a configuration says).
package enum KeyValidation {
    /// The longest key any configuration may allow.
    static let absoluteMaximumBytes = (1 << 24) - 1

    static func validate(_ key: String, maximumBytes configured: Int) throws(SettingsError) {
        let maximumBytes = min(configured, absoluteMaximumBytes)
        let bytes = key.utf8.count
        guard bytes > 0 else { throw .invalidKey(key, "a key must not be empty") }
        guard bytes <= maximumBytes else {
            throw SettingsError(
                .limitExceeded,
                "key '\(key.debugDescriptionTruncated)' is \(bytes) bytes, over the limit of \(maximumBytes) (maximumKeyBytes)",
                key: key
            )
        }
        // Most keys are ASCII: only bytes below 0x20, 0x7F and non-ASCII need a closer look.
        let needsScalarCheck =
            key.utf8.withContiguousStorageIfAvailable { bytes in bytes.contains { $0 < 0x20 || $0 >= 0x7F } }
            ?? true
        guard needsScalarCheck else { return }
        for scalar in key.unicodeScalars where scalar.properties.generalCategory == .control {
            throw .invalidKey(key, "control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
    }

    /// Why `key` can name no key in any store (empty, a control character), or nil; its length
    /// is left to the store's limits.
    package static func formProblem(_ key: String) -> String? {
        do throws(SettingsError) {
            try validate(key, maximumBytes: absoluteMaximumBytes)
            return nil
        } catch {
            return error.message
        }
    }

    /// Whether `key` passes `validate(_:maximumBytes:)`.
    static func isValid(_ key: String, maximumBytes: Int) -> Bool {
        do throws(SettingsError) {
            try validate(key, maximumBytes: maximumBytes)
            return true
        } catch {
            return false
        }
    }
}
