import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension HubReliability {
    @Suite(
        "PostgreSQL hub: clocks that are wrong are counted and shown, as between socket peers",
        .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)")
    )
    struct HubClockTests {
        @Test(
            "a machine two hours ahead sees the hub's clock behind, the others count its entries as stamped ahead, and later writes still win"
        )
        func clockSkew() async throws {
            let cluster = try HubSyncTests.hub()
            let role = try cluster.makeRole("skew")
            let url = cluster.conninfo(user: role.name, password: role.password)
            let ahead = SkewedClock(offsetMilliseconds: 2 * hour)
            let fast = Settings(inMemoryWith: SettingsConfiguration(clock: ahead.read))
            let right = Settings(inMemoryWith: .init())
            let fastLink = try fast.sync(withHub: HubConfiguration(url: url))
            let rightLink = try right.sync(withHub: HubConfiguration(url: url))
            defer {
                fastLink.stop()
                rightLink.stop()
            }
            try fast.set("from the future", forKey: "k")
            // The link counts the entry just after the store has it.
            try await waitUntil(timeout: 60) {
                right.value(forKey: "k") == "from the future" && rightLink.status.entriesAheadOfClock > 0
            }
            #expect(rightLink.status.entriesAheadOfClock == 1)
            #expect(rightLink.status.clockOffsetMilliseconds.magnitude < 60_000)
            #expect((fastLink.status.clockOffsetMilliseconds + 2 * hour).magnitude < 60_000)
            #expect(fastLink.status.entriesAheadOfClock == 0)
            // The stamp far ahead does not move the right clock: a later write there wins.
            try right.set("now", forKey: "k")
            try await waitUntil(timeout: 60) { fast.value(forKey: "k") == "now" }
        }
    }
}
