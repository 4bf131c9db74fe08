import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Replica ids: the hand-written text form agrees with Foundation's", .timeLimit(.minutes(1)))
struct ReplicaIDTests {
    @Test("the text form is Foundation's uuidString and parses back to the same id, in either case")
    func textRoundTrip() {
        for _ in 0..<1_000 {
            let uuid = UUID()
            let id = ReplicaID(uuid)
            #expect(id.description == uuid.uuidString)
            #expect(ReplicaID(uuid.uuidString) == id)
            #expect(ReplicaID(uuid.uuidString.lowercased()) == id)
        }
    }

    @Test(
        "malformed text is refused as Foundation refuses it",
        arguments: [
            "", "not-a-uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
            "E621E1F8C36C-495A-93FC-0C247A3E6E5F-", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "E621E1F8-C36C-495A-93FC_0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6É",
        ])
    func malformedText(_ text: String) {
        #expect(ReplicaID(text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    @Test("stored bytes rebuild the same id")
    func bytesRoundTrip() {
        let id = ReplicaID.random()
        #expect(ReplicaID(bytes: id.bytes) == id)
        #expect(ReplicaID(bytes: id.bytes.dropLast()) == nil)
    }
}
