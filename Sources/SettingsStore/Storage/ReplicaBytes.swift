/// The stored form of replica ids, cached: most rows a store writes name the same one or two
/// replicas, and building the 16-byte array each time costs an allocation.
struct ReplicaBytes {
    private var last: (id: ReplicaID, bytes: [UInt8])?

    /// The 16 bytes of `replica`.
    mutating func callAsFunction(_ replica: ReplicaID) -> [UInt8] {
        if let last, last.id == replica { return last.bytes }
        let bytes = replica.bytes
        last = (replica, bytes)
        return bytes
    }
}
