import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Replica sync: clocks that are wrong", .timeLimit(.minutes(2)))
struct ClockSkewTests {
    let directory = TemporaryDirectory()

    /// Three replicas in a mesh, their clocks off by `offsets`.
    private func mesh(_ offsets: [Int64]) -> (
        stores: [Settings], clocks: [SkewedClock], links: [InProcessLink]
    ) {
        let clocks = offsets.map { SkewedClock(offsetMilliseconds: $0) }
        let stores = clocks.map { Settings(inMemoryWith: SettingsConfiguration(clock: $0.read)) }
        var links: [InProcessLink] = []
        for first in stores.indices {
            for second in stores.indices where second > first {
                links.append(InProcessLink(stores[first], stores[second]))
            }
        }
        return (stores, clocks, links)
    }

    @Test(
        "a write that saw a version beats it whatever the clocks say; deletes too; all converge",
        arguments: [2 * hour, 10 * year])
    func sequentialWritesWin(skew: Int64) async throws {
        let (stores, _, links) = mesh([skew, 0, -skew])
        let (fast, normal, slow) = (stores[0], stores[1], stores[2])
        for (writer, value) in [(fast, "fast"), (normal, "normal"), (slow, "slow"), (fast, "fast again")] {
            try writer.set(value, forKey: "k")
            try await waitForConvergence(stores)
            for store in stores { #expect(store.value(forKey: "k") == .string(value), "\(value)") }
        }
        try fast.set(true, forKey: "owned.by.fast")
        try await waitForConvergence(stores)
        try normal.removeValue(forKey: "owned.by.fast")
        try await waitForConvergence(stores)
        for store in stores { #expect(store.value(forKey: "owned.by.fast") == nil) }
        try slow.set("back", forKey: "owned.by.fast")
        try await waitForConvergence(stores)
        for store in stores { #expect(store.value(forKey: "owned.by.fast") == "back") }
        _ = links
    }

    @Test("a stamp far ahead does not drag the clock, in memory or across a restart")
    func farFutureStampsDoNotDrag() async throws {
        let wild = Settings(
            inMemoryWith: SettingsConfiguration(clock: SkewedClock(offsetMilliseconds: 10 * year).read))
        do {
            let sane = try Settings(path: directory.database)
            let link = InProcessLink(wild, sane)
            try wild.set("from the future", forKey: "k")
            try await waitForConvergence([wild, sane])
            try sane.set(1, forKey: "other")
            let now = Int64(SettingsConfiguration.systemClock())
            let stamp = try #require(sane.entry(forKey: "other")).version.timestamp
            #expect(Int64(stamp.milliseconds) <= now + 1_000)
            // The count is noted just after the entries are stored, which convergence sees.
            try await waitUntil { sane.peers.first?.entriesAheadOfClock == 1 }
            #expect(sane.peers.first?.entriesAheadOfClock == 1)
            link.disconnect()
            sane.close()
        }
        let reopened = try Settings(path: directory.database)
        try reopened.set(2, forKey: "after.restart")
        let stamp = try #require(reopened.entry(forKey: "after.restart")).version.timestamp
        #expect(Int64(stamp.milliseconds) <= Int64(SettingsConfiguration.systemClock()) + 1_000)
        // The key the wild clock wrote is still taken over by the next write to it.
        try reopened.set("now", forKey: "k")
        #expect(
            try #require(reopened.entry(forKey: "k")).version
                > (try #require(wild.entry(forKey: "k"))).version)
    }

    @Test("a clock that jumps backwards still orders a replica's own writes and converges")
    func clockJumpsBack() async throws {
        let (stores, clocks, links) = mesh([0, 0, 0])
        try stores[0].set("before the jump", forKey: "k")
        try await waitForConvergence(stores)
        clocks[1].jump(by: -24 * hour)
        try stores[1].set("after the jump", forKey: "k")
        try stores[1].set("written later", forKey: "fresh")
        try await waitForConvergence(stores)
        for store in stores {
            #expect(store.value(forKey: "k") == "after the jump")
            #expect(store.value(forKey: "fresh") == "written later")
        }
        _ = links
    }

    @Test("peers see each other's clock offset")
    func clockOffsetIsReported() async throws {
        let (stores, _, links) = mesh([2 * hour, 0])
        try await waitUntil { stores[1].peers.first?.isConnected == true }
        let offset = try #require(stores[1].peers.first).clockOffsetMilliseconds
        #expect(abs(offset - 2 * hour) < 60_000)
        _ = links
    }
}
