import Synchronization

/// An `objectWillChange`-style publisher for owners of `@Setting` properties (Combine does not
/// exist on Linux).
///
/// Subscribers are called after the store commits a change of a key the owner uses, on the
/// thread that made the change (see `Settings.observe(_:handler:)`); `sinkOnMainActor(_:)` hops to
/// the main actor, and iterating the publisher as an `AsyncSequence` delivers in your own task.
public final class ObjectWillChangePublisher: Sendable {
    private struct Subscribers {
        var nextID = 0
        var handlers: [Int: @Sendable () -> Void] = [:]
    }

    /// The store observation of one store, covering every key the owner has used there.
    private struct StoreWatch {
        let id: Int
        let token: SubscriptionToken
        var keys: Set<String>
    }

    private let subscribers = Mutex(Subscribers())
    private let watches = Mutex<[ObjectIdentifier: StoreWatch]>([:])

    /// Creates a publisher with no subscribers.
    public init() {}

    /// Calls every subscriber.
    public func send() {
        let handlers = subscribers.withLock { Array($0.handlers.values) }
        for handler in handlers { handler() }
    }

    /// Calls `receive` on every `send()` until the token is cancelled or released.
    public func sink(_ receive: @escaping @Sendable () -> Void) -> SubscriptionToken {
        let id = subscribers.withLock { subscribers in
            let id = subscribers.nextID
            subscribers.nextID += 1
            subscribers.handlers[id] = receive
            return id
        }
        return SubscriptionToken { [weak self] in
            _ = self?.subscribers.withLock { $0.handlers.removeValue(forKey: id) }
        }
    }

    /// Calls `receive` on the main actor after every `send()`, in order.
    public func sinkOnMainActor(_ receive: @escaping @MainActor @Sendable () -> Void) -> SubscriptionToken {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let token = sink { continuation.yield() }
        let task = Task { @MainActor in
            for await _ in stream { receive() }
        }
        return SubscriptionToken {
            token.cancel()
            continuation.finish()
            task.cancel()
        }
    }

    /// The number of current subscribers.
    package var subscriberCount: Int {
        subscribers.withLock { $0.handlers.count }
    }

    /// Makes sure changes of `key` in `settings` reach this publisher, with one store observation
    /// per store, so a transaction of several keys the owner uses fires once.
    func watch(_ key: String, in settings: Settings) {
        let store = ObjectIdentifier(settings)
        watches.withLock { watches in
            if var watch = watches[store] {
                guard watch.keys.insert(key).inserted else { return }
                settings.observers.update(watch.id, to: .keys(watch.keys))
                watches[store] = watch
            } else {
                let (id, token) = settings.observers.register(.keys([key])) { [weak self] _ in self?.send() }
                watches[store] = StoreWatch(id: id, token: token, keys: [key])
            }
        }
    }
}

extension ObjectWillChangePublisher: AsyncSequence {
    /// One element per `send()`.
    public typealias Element = Void

    /// Iterates the sends that happen from the moment the iterator is made.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: AsyncStream<Void>.Iterator
        private let token: SubscriptionToken

        package init(publisher: ObjectWillChangePublisher) {
            let (stream, continuation) = AsyncStream.makeStream(
                of: Void.self, bufferingPolicy: .bufferingNewest(1))
            token = publisher.sink { continuation.yield() }
            base = stream.makeAsyncIterator()
        }

        /// Waits for the next send; nil when the task is cancelled.
        public mutating func next() async -> Void? {
            await base.next()
        }
    }

    /// Subscribes a new iterator; several sends while the consumer is busy coalesce into one.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(publisher: self)
    }
}
