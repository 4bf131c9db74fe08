/// Checks a key name: non-empty UTF-8, no control characters, at most `maximumBytes` bytes.
enum KeyValidation {
    static func validate(_ key: String, maximumBytes: Int) throws(SettingsError) {
        let bytes = key.utf8.count
        guard bytes > 0 else { throw .invalidKey(key, "a key must not be empty") }
        guard bytes <= maximumBytes else {
            throw SettingsError(
                .limitExceeded,
                "key '\(key.debugDescriptionTruncated)' is \(bytes) bytes, over the limit of \(maximumBytes) (maximumKeyBytes)",
                key: key
            )
        }
        for scalar in key.unicodeScalars where scalar.properties.generalCategory == .control {
            throw .invalidKey(key, "control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
    }
}
