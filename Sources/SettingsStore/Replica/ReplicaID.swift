#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The persistent identity of a replica: a UUID created with its database and kept in it.
///
/// Ordered by bytes, so that two versions with equal clocks still have one deterministic winner.
public struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The underlying UUID.
    public let uuid: UUID

    /// Wraps an existing UUID.
    public init(_ uuid: UUID) {
        self.uuid = uuid
    }

    /// A new random identity.
    package static func random() -> ReplicaID {
        ReplicaID(UUID())
    }

    /// Parses the canonical textual form (`8-4-4-4-12` hexadecimal digits, either case), or
    /// returns nil. Every entry on the wire carries one, so it is parsed by hand rather than
    /// through `UUID(uuidString:)`, which goes through `sscanf`.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ ReplicaID(utf8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses the canonical textual form from its UTF-8 bytes (see `init?(_:)`).
    package init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var bytes = (0 as UInt64, 0 as UInt64)
        var digits = 0
        for (index, character) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = character.hexDigitValue else { return nil }
            if digits < 16 {
                bytes.0 = bytes.0 << 4 | UInt64(nibble)
            } else {
                bytes.1 = bytes.1 << 4 | UInt64(nibble)
            }
            digits += 1
        }
        var tuple: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tuple) { raw in
            raw.storeBytes(of: bytes.0.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: bytes.1.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        self.uuid = UUID(uuid: tuple)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The 16 bytes of the UUID.
    package var bytes: [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// Whether `bytes` are this identity's 16 bytes (no array is made: a store's load asks it of
    /// every row).
    func hasBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count == 16 else { return false }
        return withUnsafeBytes(of: uuid.uuid) { own in
            own.loadUnaligned(as: UInt64.self) == bytes.loadUnaligned(as: UInt64.self)
                && own.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    == bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        }
    }

    /// Rebuilds an identity from 16 stored bytes.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var tuple: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tuple) { $0.copyBytes(from: bytes) }
        self.uuid = UUID(uuid: tuple)
    }

    /// Byte-wise order.
    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool {
        withUnsafeBytes(of: lhs.uuid.uuid) { left in
            withUnsafeBytes(of: rhs.uuid.uuid) { right in
                left.lexicographicallyPrecedes(right)
            }
        }
    }

    /// The canonical upper-case UUID string.
    public var description: String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = Self.hexDigits[Int(byte >> 4)]
                    text[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }
}
