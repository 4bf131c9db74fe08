import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A replica that takes a large batch while it has local writes commits it in parts, so a local
/// write waits behind one part; with none, it commits the batch whole.
@Suite("Replica batches are committed in parts while the receiver has local writes", .timeLimit(.minutes(2)))
struct BatchPartsTests {
    /// A store of `count` keys written in one transaction, so they travel in full batches.
    private func source(_ count: Int) throws -> Settings {
        let store = Settings(inMemoryWith: .init())
        try store.transaction { transaction in
            for index in 0..<count { try transaction.set(index, forKey: "bulk.\(index)") }
        }
        return store
    }

    /// The sizes of the initial-sync changes `receiver` announces while it syncs from `source`.
    /// As each is announced, the receiver's cursor for the source never claims more than the
    /// entries announced so far (the source's keys are its sequence numbers 1, 2, …): a part
    /// before a batch's last must not move it to the batch's end.
    private func initialSyncSizes(from source: Settings, to receiver: Settings) async throws -> [Int] {
        // The announced sizes, and each cursor that claimed more (read on the delivering thread).
        let seen = Mutex<(sizes: [Int], overclaims: [String])>(([], []))
        let token = receiver.observe(.all) { change in
            guard change.reason == .initialSync else { return }
            let cursor = receiver.receivedSequence(from: source.replicaID) ?? 0
            seen.withLock { seen in
                seen.sizes.append(change.keys.count)
                let announced = seen.sizes.reduce(0, +)
                if cursor > announced {
                    seen.overclaims.append("cursor \(cursor) after \(announced) entries")
                }
            }
        }
        let link = InProcessLink(source, receiver)
        try await waitForAgreement(of: [source, receiver])
        #expect(receiver.receivedSequence(from: source.replicaID) == source.sequence)
        link.disconnect()
        _ = token
        let (sizes, overclaims) = seen.withLock { $0 }
        #expect(overclaims.isEmpty, "\(overclaims)")
        return sizes
    }

    @Test(
        "a local write moments before: every commit holds at most one part; all keys and the cursor arrive"
    )
    func localWritesSplitBatches() async throws {
        let a = try source(3 * SyncSession.batchEntries)
        // A monotonic clock that stands still keeps the local write recent for the whole sync.
        var configuration = SettingsConfiguration()
        let now = Deadline.now
        configuration.monotonicClock = { now }
        let b = Settings(inMemoryWith: configuration)
        try b.set("here", forKey: "local.note")
        let sizes = try await initialSyncSizes(from: a, to: b)
        #expect(sizes.reduce(0, +) == 3 * SyncSession.batchEntries)
        #expect(sizes.allSatisfy { $0 <= SyncSession.partEntries }, "\(sizes)")
        let last = 3 * SyncSession.batchEntries - 1
        #expect(b.value(forKey: "bulk.\(last)") == .integer(Int64(last)))
        #expect(a.value(forKey: "local.note") == "here")
    }

    @Test("no local write: a batch is one commit, larger than a part")
    func quietReceiverTakesWholeBatches() async throws {
        let a = try source(3 * SyncSession.batchEntries)
        let b = Settings(inMemoryWith: .init())
        let sizes = try await initialSyncSizes(from: a, to: b)
        #expect(sizes.reduce(0, +) == 3 * SyncSession.batchEntries)
        #expect(sizes.contains { $0 > SyncSession.partEntries }, "\(sizes)")
    }

    @Test(
        "a write older than the window, on the monotonic clock, splits nothing; the wall clock does not count"
    )
    func oldLocalWriteSplitsNothing() async throws {
        let clock = SkewedClock()
        let store = Settings(inMemoryWith: .init(clock: clock.read))
        #expect(!store.hasLocalWrites(withinMilliseconds: SyncSession.localWriteWindow))
        try store.set(1, forKey: "local.x")
        let written = Date()
        // A wall clock that jumps makes a write neither older nor newer.
        clock.jump(by: -3_600_000)
        #expect(store.hasLocalWrites(withinMilliseconds: SyncSession.localWriteWindow))
        clock.jump(by: 7_200_000)
        #expect(store.hasLocalWrites(withinMilliseconds: SyncSession.localWriteWindow))
        try await waitUntil(timeout: 5) {
            !store.hasLocalWrites(withinMilliseconds: SyncSession.localWriteWindow)
        }
        #expect(Date().timeIntervalSince(written) >= Double(SyncSession.localWriteWindow) / 1000 - 0.01)
    }
}
