import Synchronization

/// Keeps a subscription alive; cancelling it, or letting it go, ends the subscription.
///
/// ```swift
/// let token = settings.observe(keys: ["audio.volume"]) { change in print(change.keys) }
/// token.cancel()  // or just drop the last reference
/// ```
public final class SubscriptionToken: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// Creates a token that runs `onCancel` once, on `cancel()` or deinit, whichever comes first.
    package init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    deinit {
        cancel()
    }

    /// Ends the subscription; calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether `cancel()` has run.
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }
}
