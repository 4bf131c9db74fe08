import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("A hub cursor moved back stays back")
struct CursorRewindTests {
    let directory = TemporaryDirectory()

    @Test("a rewound cursor is durable and never moves forward by rewinding")
    func rewindIsDurable() throws {
        let peer = ReplicaID.random()
        let settings = try Settings(path: directory.database)
        try settings.applyRemote([], from: peer, through: 50, reason: .replica)
        try settings.rewindCursor(of: peer, to: 10)
        try settings.rewindCursor(of: peer, to: 30)  // not a rewind: ignored
        #expect(settings.receivedSequence(from: peer) == 10)
        settings.close()
        let reopened = try Settings(path: directory.database)
        #expect(reopened.receivedSequence(from: peer) == 10)
    }
}
