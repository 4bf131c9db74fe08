import Dispatch
import Synchronization

/// Builds an opening store's cache on a thread of its own while the backend is still reading
/// the file.
///
/// Opening a million keys spends about two fifths of its time stepping SQLite and turning rows
/// into entries, and the rest building the table from them; fed the entries a chunk at a time
/// (`LoadedEntriesSink`), the two overlap on two cores.
final class ReplicaCacheBuilder: LoadedEntriesSink, Sendable {
    private let cache: Mutex<ReplicaCache>
    /// Applies the chunks in the order they came, one at a time.
    private let queue = DispatchQueue(label: "settingsd.cache-builder")

    /// A builder of a cache shaped by `policy`.
    package init(policy: SettingsPolicy) {
        cache = Mutex(ReplicaCache(entries: [], policy: policy))
    }

    func expect(_ count: Int) {
        queue.async { [self] in cache.withLock { $0.reserveCapacity(count) } }
    }

    func receive(_ entries: [SettingEntry]) {
        queue.async { [self] in cache.withLock { $0.apply(entries) } }
    }

    func endOfEntries() {
        // While the backend reads what else it keeps (peers, counts), the log is put in order.
        queue.async { [self] in cache.withLock { $0.finishLoading() } }
    }

    /// Waits for every chunk received to be applied and hands the cache over, leaving
    /// this builder empty (so the table is not shared, and not copied at its first change).
    func finish() -> ReplicaCache {
        queue.sync {}
        return cache.withLock { cache in
            var built = ReplicaCache(entries: [], policy: cache.policy)
            swap(&built, &cache)
            return built
        }
    }
}
