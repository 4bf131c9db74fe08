import Dispatch
import Foundation
import Synchronization

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Two replicas joined by an in-process connection: the real sync sessions of each store's
/// replicator, with frames passed through serial queues instead of a socket (and through JSON
/// text, as on the wire). Work is always enqueued on a side's queue, never run inline, as the
/// daemon's event loop does.
final class InProcessLink: Sendable {
    /// The replicators of the two sides, kept alive while the link is.
    let replicators: (a: Replicator, b: Replicator)
    private let sessions: Mutex<(a: SyncSession?, b: SyncSession?)> = Mutex((nil, nil))
    private let queueA = DispatchQueue(label: "link.a")
    private let queueB = DispatchQueue(label: "link.b")
    private let isUp = Atomic<Bool>(true)
    /// Entries carried from A to B and from B to A.
    let carriedToB = Atomic<Int>(0)
    let carriedToA = Atomic<Int>(0)
    /// Entries carried in `replicate` batches either way, and batches that carried none.
    let replicatedEntries = Atomic<Int>(0)
    let emptyBatches = Atomic<Int>(0)
    /// Frames over `SyncSession.maximumFrameBytes` that ended the link, as a socket's would.
    let oversizedFrames = Atomic<Int>(0)
    /// `replicate` frames delivered so far (the last 64 each way), for replaying one late.
    private let history = Mutex<[(frame: JSONValue, toB: Bool)]>([])
    /// Frames held back per direction (`hold(toB:)`), nil while that direction flows.
    private let held = Mutex<(toA: [JSONValue]?, toB: [JSONValue]?)>((nil, nil))
    /// Sees each frame before it is delivered, on the sending side's queue; it may block there,
    /// as a slow network would, to order frames against another link's.
    private let beforeDelivery: (@Sendable (_ frame: JSONValue, _ toB: Bool) -> Void)?

    /// `beforeAccept` runs after A composed its hello and before B reads it, `beforeWelcome`
    /// after B answered and before A reads the answer: a slow handshake lets other traffic pass.
    init(
        _ a: Settings, _ b: Settings,
        beforeDelivery: (@Sendable (_ frame: JSONValue, _ toB: Bool) -> Void)? = nil,
        beforeAccept: (@Sendable () -> Void)? = nil, beforeWelcome: (@Sendable () -> Void)? = nil
    ) {
        replicators = (a.replicator, b.replicator)
        self.beforeDelivery = beforeDelivery
        let sessionA = replicators.a.makeSession(
            address: "in-process",
            send: { [weak self] message in self?.deliver(message, toB: true) },
            execute: { [queueA] task in queueA.async(execute: task) },
            end: { [weak self] _ in self?.disconnectSoon() })
        let sessionB = replicators.b.makeSession(
            address: "in-process",
            send: { [weak self] message in self?.deliver(message, toB: false) },
            execute: { [queueB] task in queueB.async(execute: task) },
            end: { [weak self] _ in self?.disconnectSoon() })
        sessions.withLock { $0 = (sessionA, sessionB) }
        queueA.async { [self] in
            let hello = Self.roundTrip(sessionA.hello())
            queueB.async { [self] in
                beforeAccept?()
                let answer: JSONValue
                do {
                    guard case .success(.hello(let request)) = WireRequest.decode(hello).request else {
                        throw SettingsError(.protocolError, "not a hello: \(hello)")
                    }
                    answer = WireMessage.success(id: 0, try sessionB.accept(hello: request))
                } catch let error as SettingsError {
                    answer = WireMessage.failure(id: 0, error)
                } catch {
                    answer = WireMessage.failure(id: 0, SettingsError(.protocolError, "\(error)"))
                }
                let response = Self.roundTrip(answer)
                queueA.async { [self] in
                    beforeWelcome?()
                    do {
                        try sessionA.accept(response: WireMessage.decode(response))
                    } catch {
                        // A refused or failed hello ends this link; the test connects a new one.
                        disconnectSoon()
                    }
                }
            }
        }
    }

    /// Whether the link is still up.
    var isConnected: Bool { isUp.load(ordering: .acquiring) }

    private func disconnectSoon() {
        DispatchQueue.global().async { [self] in disconnect() }
    }

    /// Cuts the connection: both sessions close and frames in flight are dropped.
    func disconnect() {
        guard isUp.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let (a, b) = sessions.withLock { $0 }
        queueA.sync { a?.close() }
        queueB.sync { b?.close() }
    }

    private func deliver(_ message: ReplicationMessage, toB: Bool) {
        guard isUp.load(ordering: .acquiring) else { return }
        var text: [UInt8] = []
        message.write(to: &text)
        // A socket's framer refuses a frame over the limit and the connection ends; so here.
        guard text.count <= SyncSession.maximumFrameBytes else {
            oversizedFrames.add(1, ordering: .relaxed)
            disconnectSoon()
            return
        }
        let frame = (try? JSONValue.parse(text[...])) ?? .null
        if frame["op"] == "replicate", case .array(let entries)? = frame["entries"] {
            replicatedEntries.add(entries.count, ordering: .relaxed)
            if entries.isEmpty { emptyBatches.add(1, ordering: .relaxed) }
        }
        if case .array(let entries)? = frame["entries"] {
            if toB {
                carriedToB.add(entries.count, ordering: .relaxed)
            } else {
                carriedToA.add(entries.count, ordering: .relaxed)
            }
        }
        if frame["op"] == "replicate" {
            history.withLock { history in
                history.append((frame, toB))
                if history.count > 128 { history.removeFirst() }
            }
        }
        beforeDelivery?(frame, toB)
        held.withLock { held in
            // Sent under the lock, so that a frame never overtakes held ones being released.
            if toB, held.toB != nil {
                held.toB?.append(frame)
            } else if !toB, held.toA != nil {
                held.toA?.append(frame)
            } else {
                send(frame, toB: toB)
            }
        }
    }

    /// Holds back the frames towards B (or towards A) until `release(toB:)`, as a stalled
    /// connection would: nothing is lost, it arrives late and in order.
    func hold(toB: Bool) {
        held.withLock { held in
            if toB { held.toB = held.toB ?? [] } else { held.toA = held.toA ?? [] }
        }
    }

    /// Delivers the frames held towards B (or A), in order, and lets that direction flow again.
    func release(toB: Bool) {
        held.withLock { held in
            let frames = (toB ? held.toB : held.toA) ?? []
            if toB { held.toB = nil } else { held.toA = nil }
            for frame in frames { send(frame, toB: toB) }
        }
    }

    /// Delivers again a batch delivered before (chosen by `pick`), as a duplicated or reordered
    /// frame would arrive: it must change nothing.
    func replayOldBatch(pick: Int) {
        guard let (frame, toB) = history.withLock({ $0.isEmpty ? nil : $0[pick % $0.count] }) else { return }
        send(frame, toB: toB)
    }

    /// Hands `frame` to the other side as its text, read as a socket's frames are read.
    private func send(_ frame: JSONValue, toB: Bool) {
        let target = sessions.withLock { toB ? $0.b : $0.a }
        var bytes: [UInt8] = []
        frame.write(to: &bytes)
        let text = bytes
        (toB ? queueB : queueA).async { [self] in
            guard isUp.load(ordering: .acquiring) else { return }
            do {
                try target?.receive(frame: text[...])
            } catch {
                // On a link queue: disconnecting here would wait on this very queue.
                disconnectSoon()
            }
        }
    }

    /// Serializes and parses a frame, as a socket would carry it.
    private static func roundTrip(_ message: JSONValue) -> JSONValue {
        (try? JSONValue.parse(message.serialized())) ?? .null
    }
}

/// Waits until every store has the same digest.
func waitForConvergence(_ stores: [Settings], timeout: Double = 20) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Set(stores.map(\.digest)).count > 1 {
        guard Date() < deadline else {
            throw SettingsError(.timeout, "replicas did not converge: \(stores.map(\.digest))")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Waits until every store has the same digest and every connected peer of each is agreed; the
/// error names each store's sequence number, digest and verdicts.
func waitForAgreement(of stores: [Settings], timeout: Double = 30) async throws {
    do {
        try await waitForConvergence(stores, timeout: timeout)
        try await waitUntil(timeout: timeout) {
            stores.allSatisfy { $0.peers.filter(\.isConnected).allSatisfy { $0.agreement == .agreed } }
        }
    } catch {
        let report = stores.map { store in
            "\(store.replicaID) seq \(store.sequence) digest \(store.digest): "
                + store.peers.map { "\($0.replica.description.prefix(8)) \($0.agreement)" }.joined(
                    separator: ", ")
        }
        throw SettingsError(.timeout, "\(error)\n\(report.joined(separator: "\n"))")
    }
}
