import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Replica sync: tombstone collection", .timeLimit(.minutes(2)))
struct TombstoneTests {
    let directory = TemporaryDirectory()
    static let days91 = 91 * 24 * hour

    @Test("tombstones older than the lifetime are collected, on disk too, and the horizon is kept")
    func collection() throws {
        let clock = SkewedClock()
        let configuration = SettingsConfiguration(clock: clock.read)
        do {
            let settings = try Settings(path: directory.database, configuration: configuration)
            try settings.set(1, forKey: "gone")
            try settings.removeValue(forKey: "gone")
            try settings.set(2, forKey: "kept")
            #expect(settings.entry(forKey: "gone")?.isTombstone == true)
            #expect(try settings.collectTombstones() == 0)
            clock.jump(by: Self.days91)
            #expect(try settings.collectTombstones() == 1)
            #expect(settings.entry(forKey: "gone") == nil)
            #expect(settings.tombstoneHorizon > .zero)
        }
        let reopened = try Settings(path: directory.database, configuration: configuration)
        #expect(reopened.entry(forKey: "gone") == nil)
        #expect(reopened.value(forKey: "kept") == 2)
        #expect(reopened.tombstoneHorizon > .zero)
    }

    @Test("a replica away longer than the lifetime brings no deleted key back, and keeps its own changes")
    func awayLongerThanTheLifetime() async throws {
        let clockA = SkewedClock()
        let clockB = SkewedClock()
        let a = Settings(inMemoryWith: SettingsConfiguration(clock: clockA.read))
        let b = Settings(inMemoryWith: SettingsConfiguration(clock: clockB.read))
        try a.set("shared", forKey: "doomed")
        try a.set("stays", forKey: "survivor")
        let first = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        first.disconnect()

        try b.set("written while away", forKey: "b.own")  // older than A's horizon once A collects
        try a.removeValue(forKey: "doomed")
        clockA.jump(by: Self.days91)
        clockB.jump(by: Self.days91)
        #expect(try a.collectTombstones() == 1)
        #expect(a.entry(forKey: "doomed") == nil)

        let second = InProcessLink(b, a)
        try await waitForConvergence([a, b])
        try await waitUntil { a.peers.first?.agreement == .agreed }
        for store in [a, b] {
            #expect(store.value(forKey: "doomed") == nil)
            #expect(store.value(forKey: "survivor") == "stays")
            #expect(store.value(forKey: "b.own") == "written while away")
        }
        second.disconnect()
    }

    @Test("a store that never collected a tombstone takes every old entry")
    func noHorizonTakesEverything() async throws {
        let old = SkewedClock(offsetMilliseconds: -2 * Self.days91)
        let a = Settings(inMemoryWith: SettingsConfiguration(clock: old.read))
        try a.set("from long ago", forKey: "ancient")
        let b = Settings(inMemoryWith: .init())
        #expect(try b.collectTombstones() == 0)
        let link = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        #expect(b.value(forKey: "ancient") == "from long ago")
        link.disconnect()
    }
}
