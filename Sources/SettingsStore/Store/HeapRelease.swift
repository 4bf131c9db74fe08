#if canImport(Glibc)
    internal import CLinux
#endif

/// Hands the memory a bulk load freed back to the system.
///
/// Opening a store builds an entry, with a key string, for every stored setting before the
/// entry table keeps what it needs; glibc keeps such freed small blocks in its heap for reuse, so
/// at a million keys the process would stay ~75 MiB larger than the table it holds.
package enum HeapRelease {
    /// Loads of at least this many entries are followed by a release (it costs milliseconds).
    static let bulkLoadEntries = 50_000

    /// Returns free heap pages to the system (`malloc_trim`); does nothing off glibc.
    package static func returnFreedMemory() {
        #if canImport(Glibc)
            _ = malloc_trim(0)
        #endif
    }
}
