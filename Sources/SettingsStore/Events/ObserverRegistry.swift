import Synchronization

/// The observers of one store, and the ordered delivery of its committed changes to them: the
/// store's outbox.
///
/// Changes and commit notices are queued in commit order (under the store's writer lock) and
/// delivered by whichever thread finds the queue idle, outside every lock, so handlers may read or
/// write the store. Nothing a handler does runs under a lock of the store.
/// A handler therefore runs on the thread of the write that caused the change, or of a write
/// that was committing at the same time; never two handlers of one registry at once.
final class ObserverRegistry: Sendable {
    private struct Observer {
        let filter: ChangeFilter
        let handler: @Sendable (SettingsChange) -> Void
    }

    private struct Table {
        var nextID = 0
        var observers: [Int: Observer] = [:]
        /// Observers of exact keys, indexed by key, so a write to key Y never looks at observers of X.
        var byKey: [String: Set<Int>] = [:]
        /// Observers of prefixes or of everything, checked for every change.
        var broad: Set<Int> = []

        mutating func insert(_ observer: Observer, id: Int) {
            observers[id] = observer
            if case .keys(let keys) = observer.filter {
                for key in keys { byKey[key, default: []].insert(id) }
            } else {
                broad.insert(id)
            }
        }

        mutating func remove(_ id: Int) -> Observer? {
            guard let observer = observers.removeValue(forKey: id) else { return nil }
            if case .keys(let keys) = observer.filter {
                for key in keys {
                    byKey[key]?.remove(id)
                    if byKey[key]?.isEmpty == true { byKey[key] = nil }
                }
            } else {
                broad.remove(id)
            }
            return observer
        }
    }

    /// One item of the outbox.
    private enum Delivery {
        case change(SettingsChange)
        case notice(CommitNotice)
    }

    private struct Outbox {
        var queue: [Delivery] = []
        var draining = false
    }

    private struct Listeners {
        var nextID = 0
        /// In registration order (ids only grow), so delivery needs no sorting.
        var handlers: [(id: Int, handler: @Sendable (CommitNotice) -> Void)] = []
    }

    private let table = Mutex(Table())
    private let outbox = Mutex(Outbox())
    private let listeners = Mutex(Listeners())

    /// Registers `handler` for the keys `filter` selects; the token removes it.
    func add(_ filter: ChangeFilter, handler: @escaping @Sendable (SettingsChange) -> Void)
        -> SubscriptionToken
    {
        register(filter, handler: handler).token
    }

    /// Registers `handler` and also returns its id, for `update(_:to:)`.
    func register(_ filter: ChangeFilter, handler: @escaping @Sendable (SettingsChange) -> Void)
        -> (id: Int, token: SubscriptionToken)
    {
        let id = table.withLock { table in
            let id = table.nextID
            table.nextID += 1
            table.insert(Observer(filter: filter, handler: handler), id: id)
            return id
        }
        return (id, SubscriptionToken { [weak self] in self?.table.withLock { _ = $0.remove(id) } })
    }

    /// Changes the keys a registered observer receives, with no moment in which it misses changes.
    func update(_ id: Int, to filter: ChangeFilter) {
        table.withLock { table in
            guard let observer = table.remove(id) else { return }
            table.insert(Observer(filter: filter, handler: observer.handler), id: id)
        }
    }

    /// Registers `handler` for every commit notice; the token removes it.
    func addCommitListener(_ handler: @escaping @Sendable (CommitNotice) -> Void) -> SubscriptionToken {
        let id = listeners.withLock { listeners in
            defer { listeners.nextID += 1 }
            listeners.handlers.append((listeners.nextID, handler))
            return listeners.nextID
        }
        return SubscriptionToken { [weak self] in
            self?.listeners.withLock { $0.handlers.removeAll { $0.id == id } }
        }
    }

    /// The number of registered observers.
    var count: Int { table.withLock { $0.observers.count } }

    /// Queues a committed change; call in commit order, then `deliverPending()` outside locks.
    func enqueue(_ change: SettingsChange) {
        outbox.withLock { $0.queue.append(.change(change)) }
    }

    /// Queues a commit notice; call in commit order, then `deliverPending()` outside locks.
    func enqueue(_ notice: CommitNotice) {
        outbox.withLock { $0.queue.append(.notice(notice)) }
    }

    /// Delivers queued changes in order, unless another thread is already doing so (it will
    /// deliver these too before it stops).
    func deliverPending() {
        var batch = outbox.withLock { outbox -> [Delivery]? in
            guard !outbox.draining, !outbox.queue.isEmpty else { return nil }
            outbox.draining = true
            defer { outbox.queue.removeAll(keepingCapacity: true) }
            return outbox.queue
        }
        while let deliveries = batch {
            for delivery in deliveries {
                switch delivery {
                case .change(let change): deliver(change)
                case .notice(let notice): deliver(notice)
                }
            }
            batch = outbox.withLock { outbox -> [Delivery]? in
                guard !outbox.queue.isEmpty else {
                    outbox.draining = false
                    return nil
                }
                defer { outbox.queue.removeAll(keepingCapacity: true) }
                return outbox.queue
            }
        }
    }

    private func deliver(_ notice: CommitNotice) {
        for listener in listeners.withLock({ $0.handlers }) { listener.handler(notice) }
    }

    private func deliver(_ change: SettingsChange) {
        let targets = table.withLock { table -> [(@Sendable (SettingsChange) -> Void, SettingsChange)] in
            var ids = table.broad
            for key in change.keys {
                if let observers = table.byKey[key] { ids.formUnion(observers) }
            }
            return ids.sorted().compactMap { id in
                guard let observer = table.observers[id],
                    let selected = change.restricted(to: observer.filter)
                else { return nil }
                return (observer.handler, selected)
            }
        }
        for (handler, selected) in targets { handler(selected) }
    }
}
