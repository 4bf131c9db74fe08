import Foundation
import Synchronization
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Replica sync: convergence and last-writer-wins", .timeLimit(.minutes(2)))
struct ConvergenceTests {
    func replica(clock: (@Sendable () -> UInt64)? = nil, limits: SettingsLimits = .desktop) -> Settings {
        Settings(
            inMemoryWith: SettingsConfiguration(
                limits: limits, clock: clock ?? SettingsConfiguration.systemClock))
    }

    @Test("writes on each side converge to identical digests")
    func twoReplicas() async throws {
        let (a, b) = (replica(), replica())
        try a.set(1, forKey: "a.only")
        try b.set("two", forKey: "b.only")
        let link = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        try a.set(3, forKey: "live")
        try await waitForConvergence([a, b])
        #expect(b.value(forKey: "live") == 3)
        #expect(a.snapshot() == ["a.only": 1, "b.only": "two", "live": 3])
        link.disconnect()
    }

    @Test("concurrent writes to one key pick the same winner everywhere")
    func concurrentWrites() async throws {
        let wall = Mutex<UInt64>(1_000_000)
        let clock: @Sendable () -> UInt64 = { wall.withLock { $0 } }
        let (a, b, c) = (replica(clock: clock), replica(clock: clock), replica(clock: clock))
        // Same wall-clock millisecond on every replica: the replica id decides, identically everywhere.
        try a.set("from a", forKey: "k")
        try b.set("from b", forKey: "k")
        try c.set("from c", forKey: "k")
        let links = [InProcessLink(a, b), InProcessLink(b, c)]
        try await waitForConvergence([a, b, c])
        let winner = [a, b, c].compactMap { $0.entry(forKey: "k") }.max { $0.version < $1.version }
        for store in [a, b, c] {
            #expect(store.entry(forKey: "k")?.version == winner?.version)
            #expect(store.value(forKey: "k") == winner?.value)
        }
        _ = links
    }

    @Test("a delete and a concurrent set resolve by version, the same way everywhere")
    func deleteVersusSet() async throws {
        let wall = Mutex<UInt64>(5_000_000)
        let clock: @Sendable () -> UInt64 = { wall.withLock { $0 } }
        let (a, b) = (replica(clock: clock), replica(clock: clock))
        try a.set("old", forKey: "k")
        let first = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        first.disconnect()
        try b.set("newer", forKey: "k")
        wall.withLock { $0 += 10 }
        try a.removeValue(forKey: "k")  // later wall clock: the delete wins
        let second = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        #expect(a.value(forKey: "k") == nil)
        #expect(b.value(forKey: "k") == nil)
        #expect(b.entry(forKey: "k")?.isTombstone == true)
        second.disconnect()
    }

    @Test("partition, writes on both sides, heal: three replicas converge")
    func partitionAndHeal() async throws {
        let (a, b, c) = (replica(), replica(), replica())
        var links = [InProcessLink(a, b), InProcessLink(b, c)]
        try a.set(1, forKey: "before")
        try await waitForConvergence([a, b, c])
        for link in links { link.disconnect() }
        for index in 0..<50 {
            try a.set(index, forKey: "a.\(index)")
            try c.set(index, forKey: "c.\(index)")
            try b.set(index, forKey: "shared.\(index % 5)")
        }
        try a.removeValue(forKey: "before")
        links = [InProcessLink(a, b), InProcessLink(b, c)]
        try await waitForConvergence([a, b, c])
        #expect(c.value(forKey: "before") == nil)
        #expect(a.keys(withPrefix: "c.").count == 50)
        for link in links { link.disconnect() }
    }

    @Test("a replica offline for 10,000 changes catches up with only those changes")
    func catchUpCostsWhatChanged() async throws {
        let (a, b) = (replica(), replica())
        try b.transaction { transaction in
            for index in 0..<20_000 { try transaction.set(index, forKey: "old.\(index)") }
        }
        let first = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        first.disconnect()
        try b.transaction { transaction in
            for index in 0..<10_000 { try transaction.set(-index - 1, forKey: "old.\(index)") }
        }
        let second = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        #expect(second.carriedToA.load(ordering: .relaxed) == 10_000)
        #expect(a.value(forKey: "old.9999") == -10_000)
        second.disconnect()
    }

    @Test("a stale peer does not resurrect a deleted key")
    func tombstonesHold() async throws {
        let (a, b, c) = (replica(), replica(), replica())
        try a.set("value", forKey: "k")
        var links = [InProcessLink(a, b), InProcessLink(a, c)]
        try await waitForConvergence([a, b, c])
        for link in links { link.disconnect() }
        try a.removeValue(forKey: "k")
        links = [InProcessLink(a, b)]
        try await waitForConvergence([a, b])
        links.append(InProcessLink(c, b))  // c still holds the old value
        try await waitForConvergence([a, b, c])
        for store in [a, b, c] { #expect(store.value(forKey: "k") == nil) }
        for link in links { link.disconnect() }
    }

    @Test("replaying a batch changes nothing")
    func replayIsHarmless() throws {
        let (a, b) = (replica(), replica())
        try a.set(1, forKey: "x")
        try a.set(2, forKey: "y")
        let batch = a.entries(after: 0)
        #expect(try b.applyRemote(batch, from: a.replicaID, through: 2, reason: .replica).applied == 2)
        let digest = b.digest
        #expect(try b.applyRemote(batch, from: a.replicaID, through: 2, reason: .replica).applied == 0)
        #expect(
            try b.applyRemote(Array(batch.reversed()), from: a.replicaID, through: 2, reason: .replica)
                .applied == 0)
        #expect(b.digest == digest)
        #expect(b.receivedSequence(from: a.replicaID) == 2)
    }

    @Test("a batch from a peer, whatever keys it repeats, leaves what its entries one at a time leave")
    func batchMatchesEntriesOneAtATime() throws {
        var generator = SeededGenerator(seed: SeededGenerator.seed)
        let peer = ReplicaID.random()
        let base = SettingsConfiguration.systemClock() - 60_000
        func entry(_ key: String) -> SettingEntry {
            let value: SettingValue? =
                Int.random(in: 0..<5, using: &generator) == 0
                ? nil : .integer(Int64.random(in: 0..<1_000, using: &generator))
            let stamp = HybridTimestamp(
                milliseconds: base + UInt64.random(in: 0..<50, using: &generator), counter: 0)
            return SettingEntry(
                key: key, value: value, version: SettingVersion(timestamp: stamp, replica: peer), sequence: 0)
        }
        for trial in 0..<60 {
            // Half the batches name each key once (the common case), half repeat some.
            let keys = (0..<8).map { "batch.\(trial).\($0)" }
            let held = keys.prefix(4).map(entry)
            let batch =
                trial % 2 == 0
                ? keys.shuffled(using: &generator).map(entry)
                : (0..<12).map { _ in entry(keys.randomElement(using: &generator) ?? keys[0]) }
            let (atOnce, oneByOne) = (replica(), replica())
            for store in [atOnce, oneByOne] {
                try store.applyRemote(held, from: peer, through: nil, reason: .replica)
            }
            let recorder = EventRecorder()
            let token = atOnce.observe(.all, handler: recorder.handler)
            try atOnce.applyRemote(batch, from: peer, through: nil, reason: .replica)
            for single in batch {
                try oneByOne.applyRemote([single], from: peer, through: nil, reason: .replica)
            }
            token.cancel()
            #expect(atOnce.digest == oneByOne.digest, "trial \(trial): \(batch.map(\.key))")
            #expect(atOnce.snapshot() == oneByOne.snapshot(), "trial \(trial)")
            let announced = recorder.keys.flatMap { $0 }
            #expect(Set(announced).count == announced.count, "trial \(trial): \(announced)")
        }
    }

    @Test("a clock far ahead still converges, without dragging the other clock along")
    func clockSkew() async throws {
        let now = SettingsConfiguration.systemClock()
        let ahead = replica(clock: { now + 86_400_000 })  // one day ahead
        let normal = replica(clock: { now })
        try ahead.set("ahead", forKey: "k")
        try normal.set("normal", forKey: "k")
        let link = InProcessLink(ahead, normal)
        try await waitForConvergence([ahead, normal])
        #expect(normal.value(forKey: "k") == "ahead")
        try normal.set(1, forKey: "after")
        let stamp = try #require(normal.entry(forKey: "after")).version.timestamp
        #expect(stamp.milliseconds <= now + normal.configuration.maximumClockSkewMilliseconds)
        link.disconnect()
    }

    @Test("a fresh replica with only defaults overwrites nothing")
    func defaultsDoNotTravel() async throws {
        let (a, fresh) = (replica(), replica())
        try a.set(0.9, for: .volume)
        fresh.register(defaults: ["audio.volume": 0.1, "ui.theme": "light"])
        #expect(fresh[.volume] == 0.5)
        let link = InProcessLink(a, fresh)
        try await waitForConvergence([a, fresh])
        #expect(a[.volume] == 0.9)
        #expect(fresh[.volume] == 0.9)
        #expect(a.value(forKey: "ui.theme") == nil)
        link.disconnect()
    }
}
