/// The sync keys a machine holds: the one it seals with, and those it held before rotations
/// (rows sealed under them still open, and a target still sealed under one is re-sealed).
public struct SyncKeyring: Sendable, Equatable {
    /// The key entries are sealed with.
    package var current: SyncKey
    /// Keys this one was rotated from, newest first.
    package var previous: [SyncKey]

    package init(current: SyncKey, previous: [SyncKey] = []) {
        self.current = current
        self.previous = previous
    }

    /// The current key's public id (16 hexadecimal digits): what `status` and seal records show.
    public var keyID: String { current.id }

    /// The most previous keys kept.
    package static let maximumPrevious = 8

    /// The keyring after `keys rotate`: a new sealing secret, the current key kept as previous.
    package func rotated() -> SyncKeyring {
        SyncKeyring(
            current: current.rotated(), previous: Array(([current] + previous).prefix(Self.maximumPrevious)))
    }

    /// The keyring after importing `key`: this one's keys kept as previous when `key` names keys
    /// the same way (a rotation made elsewhere), dropped when it is another key altogether.
    package func importing(_ key: SyncKey) -> SyncKeyring {
        guard key != current else { return self }
        guard key.sharesNaming(with: current) else { return SyncKeyring(current: key) }
        let kept = ([current] + previous).filter { $0 != key }
        return SyncKeyring(current: key, previous: Array(kept.prefix(Self.maximumPrevious)))
    }

    /// A sealer for `target` with these keys.
    package func sealer(for target: [UInt8]) -> EntrySealer {
        EntrySealer(key: current, previous: previous, target: target)
    }

    /// The held key whose id is `id`, current or previous.
    package func key(withID id: String) -> SyncKey? {
        ([current] + previous).first { $0.id == id }
    }
}
