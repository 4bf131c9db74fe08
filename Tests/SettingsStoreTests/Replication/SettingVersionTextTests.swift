import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Versions: the wire form parses back to the version that wrote it", .timeLimit(.minutes(1)))
struct SettingVersionTextTests {
    @Test("every version's description parses back to it, at the ends of each field's range")
    func textRoundTrip() {
        var generator = SystemRandomNumberGenerator()
        let edges: [(UInt64, UInt16)] = [
            (0, 0), (0, .max), (HybridTimestamp.maximumMilliseconds - 1, .max), (1, 1),
        ]
        let random = (0..<1_000).map { _ in
            (
                UInt64.random(in: 0..<HybridTimestamp.maximumMilliseconds, using: &generator),
                UInt16.random(in: 0...UInt16.max, using: &generator)
            )
        }
        for (milliseconds, counter) in edges + random {
            let version = SettingVersion(
                timestamp: HybridTimestamp(milliseconds: milliseconds, counter: counter), replica: .random())
            #expect(SettingVersion(version.description) == version, "\(version)")
            #expect(SettingVersion(version.description.lowercased()) == version)
        }
    }

    @Test(
        "malformed text is refused",
        arguments: [
            "", "1.2", "1.2@", "@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "1@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            ".1@E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "1.@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "1.65536@E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "+1.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "-1.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "1.2.3@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "1.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5F@", "1.2@@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "253402300800000.0@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "99999999999999999999999.0@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            " 1.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "1.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5",
            "١.2@E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        ])
    func malformedText(_ text: String) {
        #expect(SettingVersion(text) == nil)
    }
}
