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
    public static func random() -> ReplicaID {
        ReplicaID(UUID())
    }

    /// Parses the canonical textual form, or returns nil.
    public init?(_ text: String) {
        guard let uuid = UUID(uuidString: text) else { return nil }
        self.uuid = uuid
    }

    /// The 16 bytes of the UUID.
    var bytes: [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// Rebuilds an identity from 16 stored bytes.
    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var tuple = UUID().uuid
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
    public var description: String { uuid.uuidString }
}
