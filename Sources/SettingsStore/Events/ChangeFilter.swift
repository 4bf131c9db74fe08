/// Which keys an observer is interested in.
public enum ChangeFilter: Sendable, Hashable {
    /// Exactly these keys.
    case keys(Set<String>)
    /// Every key that starts with one of these prefixes (compared as UTF-8 bytes of their NFC forms).
    case prefixes([String])
    /// Every key that is one of `keys` or starts with one of `prefixes`.
    case keysOrPrefixes(keys: Set<String>, prefixes: [String])
    /// Every key.
    case all

    /// Whether `key` is selected.
    package func matches(_ key: String) -> Bool {
        switch self {
        case .keys(let keys): keys.contains(key)
        case .prefixes(let prefixes): prefixes.contains { KeyIdentity.hasPrefix(key, $0) }
        case .keysOrPrefixes(let keys, let prefixes):
            keys.contains(key) || prefixes.contains { KeyIdentity.hasPrefix(key, $0) }
        case .all: true
        }
    }
}
