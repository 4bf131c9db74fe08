internal import CDconf
import Dispatch
package import SettingsStore
import Synchronization

/// One `DconfClient` on a GLib main loop of its own thread: dconf's change notifications are
/// dispatched there, and everything done with the client is handed to that thread.
///
/// ```swift
/// let connection = try DconfConnection(watching: ["/org/gnome/"]) { paths, tag in … }
/// connection.perform { client in try? client.change([("/org/gnome/x", .boolean(true))]) }
/// connection.stop()
/// ```
package final class DconfConnection: Sendable {
    /// What a change notification says: the changed keys and dirs (dirs end in `/`), and the
    /// tag of the write that made them.
    package typealias ChangeHandler =
        @Sendable (_ client: DconfClient, _ paths: [String], _ tag: String?) -> Void

    private let api: CSettingsDconf
    private let loop = Mutex<LoopHandle?>(nil)

    /// Starts the thread, connects to dconf and watches `dirs`; returns once the watches are in
    /// place. `onChange` runs on the connection's thread.
    ///
    /// - Throws: `io` when libdconf cannot be loaded or the thread cannot start.
    package init(watching dirs: [String], onChange: @escaping ChangeHandler) throws(SettingsError) {
        let api = try LibDconf.functions()
        self.api = api
        let ready = Mutex<LoopHandle?>(nil)
        let started = DispatchSemaphore(value: 0)
        try DetachedThread.start("dconf") {
            csettings_dconf_name_thread()
            let context = api.main_context_new()
            api.main_context_push_thread_default(context)
            let client = DconfClient(api: api)
            let handler = Unmanaged.passRetained(ChangeBox(client: client, handler: onChange))
            var functions = api
            _ = csettings_dconf_on_changed(
                &functions, client.client,
                { _, prefix, changes, tag, data in
                    guard let data else { return }
                    let box = Unmanaged<ChangeBox>.fromOpaque(data).takeUnretainedValue()
                    let prefix = String(cString: prefix)
                    var paths: [String] = []
                    var index = 0
                    while let change = changes[index] {
                        paths.append(prefix + String(cString: change))
                        index += 1
                    }
                    box.handler(box.client, paths, tag.map { String(cString: $0) })
                }, handler.toOpaque())
            for dir in dirs { client.watch(dir) }
            let mainLoop = api.main_loop_new(context, 0)
            ready.withLock { $0 = LoopHandle(context: context, loop: mainLoop, client: client) }
            started.signal()
            api.main_loop_run(mainLoop)
            // Stopped: the handler box and client go with the loop.
            api.main_loop_unref(mainLoop)
            api.main_context_pop_thread_default(context)
            handler.release()
            ready.withLock { $0 = nil }
            api.main_context_unref(context)
        }
        started.wait()
        loop.withLock { $0 = ready.withLock { $0 } }
    }

    deinit {
        stop()
    }

    /// Runs `body` on the connection's thread with its client, after what was handed to it
    /// before; does nothing once stopped.
    package func perform(_ body: @escaping @Sendable (DconfClient) -> Void) {
        // The context is referenced under the lock: `stop()` may end the loop meanwhile, and its
        // thread then drops its own reference, which must not be the last while this hands work.
        let api = api
        let referenced = loop.withLock { handle -> LoopHandle? in
            guard let handle else { return nil }
            _ = api.main_context_ref(handle.context)
            return handle
        }
        guard let handle = referenced else { return }
        defer { api.main_context_unref(handle.context) }
        invoke(on: handle) { body(handle.client) }
    }

    /// Ends the loop (after the work already handed to it); the client is released on its thread.
    package func stop() {
        guard
            let handle = loop.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        let api = api
        invoke(on: handle) { api.main_loop_quit(handle.loop) }
    }

    /// Hands `body` to the loop's context, to run once on its thread.
    private func invoke(on handle: LoopHandle, _ body: @escaping @Sendable () -> Void) {
        api.main_context_invoke_full(
            handle.context, CSETTINGS_G_PRIORITY_DEFAULT,
            { data in
                guard let data else { return 0 }
                Unmanaged<WorkBox>.fromOpaque(data).takeUnretainedValue().body()
                return 0
            }, Unmanaged.passRetained(WorkBox(body)).toOpaque(),
            { data in
                guard let data else { return }
                Unmanaged<WorkBox>.fromOpaque(data).release()
            })
    }
}

/// The loop's context, the loop and its client.
// The client is only used on the loop's thread (through `perform`); the context and loop are
// GLib objects that GLib documents as safe to invoke and quit from any thread.
private struct LoopHandle: @unchecked Sendable {  // see above: GLib's thread-safe calls only
    let context: OpaquePointer
    let loop: OpaquePointer
    let client: DconfClient
}

private final class ChangeBox: @unchecked Sendable {  // made before the loop, then used on its thread only
    let client: DconfClient
    let handler: DconfConnection.ChangeHandler
    package init(client: DconfClient, handler: @escaping DconfConnection.ChangeHandler) {
        self.client = client
        self.handler = handler
    }
}

/// A closure handed through GLib's `gpointer`.
private final class WorkBox: Sendable {
    let body: @Sendable () -> Void
    package init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
