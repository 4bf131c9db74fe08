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
    @Suite("Hub fingerprints: MD5 as RFC 1321 has it, and what PostgreSQL computes for the same row")
    struct HubFingerprintTests {
        @Test(
            "the first 8 bytes of MD5, for messages that end on every side of a block's padding",
            arguments: [
                ("", 0xd41d_8cd9_8f00_b204), ("abc", 0x9001_5098_3cd2_4fb0),
                ("message digest", 0xf96b_697d_7cb7_938d),
                (String(repeating: "1234567890", count: 8), 0x57ed_f4a2_2be3_c955),
                (String(repeating: "a", count: 55), 0xef17_72b6_dff9_a122),
                (String(repeating: "a", count: 56), 0x3b0c_8ac7_03f8_28b0),
                (String(repeating: "a", count: 64), 0x0148_42d4_80b5_7149),
                (String(repeating: "a", count: 119), 0x8a7b_d073_2ed6_a28c),
                (String(repeating: "a", count: 120), 0x5f61_c0cc_ad4c_ac44),
            ] as [(String, UInt64)])
        func md5Vectors(message: String, prefix: UInt64) {
            #expect(Array(message.utf8).withUnsafeBytes { MD5.prefix64($0) } == prefix)
        }

        @Test(
            "a local entry's fingerprint is the one PostgreSQL's generated column holds for its row",
            .enabled(
                if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)"))
        func matchesPostgreSQL() throws {
            let cluster = try HubSyncTests.hub()
            let connection = try PostgresConnection(conninfo: cluster.conninfo(), defaults: [:])
            var generator = SystemRandomNumberGenerator()
            let values: [SettingValue?] = [
                nil, .integer(7), .string("é" + String(repeating: "x", count: 200)), .bool(true),
                .array([.double(1.5), .data(Data([0, 255]))]),
            ]
            for (index, value) in values.enumerated() {
                let entry = SettingEntry(
                    key: "fingerprint.\(index).\(UInt32.random(in: 0...UInt32.max, using: &generator))",
                    value: value,
                    version: SettingVersion(
                        timestamp: HybridTimestamp(
                            rawValue: UInt64.random(in: 0...(1 << 62), using: &generator)),
                        replica: ReplicaID.random()),
                    sequence: 1)
                let rows = try connection.execute(
                    "SELECT settingsd.fingerprint($1, $2, $3, $4)",
                    [
                        .text(entry.key), .int64(Int64(bitPattern: entry.version.timestamp.rawValue)),
                        .bytes(entry.version.replica.bytes), value.map { .bytes($0.encoded()) } ?? .null,
                    ])
                #expect(
                    UInt64(bitPattern: rows.int64(0, 0)) == HubFingerprint.of(entry),
                    "\(String(describing: value))")
            }
        }
    }
}
