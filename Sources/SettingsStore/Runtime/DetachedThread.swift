#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own for work that blocks for good (an event loop, a hub link), kept off
/// Dispatch's shared pool.
package enum DetachedThread {
    /// Runs `body` on a new detached thread; `purpose` names it in the error.
    package static func start(_ purpose: String, _ body: @escaping @Sendable () -> Void) throws(SettingsError)
    {
        let box = Unmanaged.passRetained(ThreadBody(body))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let body = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue()
                body.run()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw SettingsError(.io, "cannot start the \(purpose) thread (error \(result))")
        }
        pthread_detach(thread)
    }
}

/// A closure handed to a new pthread.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void

    package init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
