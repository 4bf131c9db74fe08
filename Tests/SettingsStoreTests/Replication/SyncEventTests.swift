import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Replica sync: change events", .timeLimit(.minutes(2)))
struct SyncEventTests {
    @Test("the first catch-up is announced as initialSync, later changes as replica, with the peer as origin")
    func reasons() async throws {
        let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
        try a.set(1, forKey: "x")
        try a.set(2, forKey: "y")
        let recorder = EventRecorder()
        let token = b.observe(.all, handler: recorder.handler)
        let link = InProcessLink(a, b)
        try await waitForConvergence([a, b])
        try a.set(3, forKey: "x")
        try await waitForConvergence([a, b])
        #expect(recorder.reasons.first == .initialSync)
        #expect(recorder.reasons.last == .replica)
        #expect(recorder.all.allSatisfy { $0.origin == a.replicaID })
        #expect(recorder.all.last?.changes.first?.value == 3)
        link.disconnect()
        _ = token
    }

    @Test("an incoming change over a local limit is not applied and is announced as quotaViolation")
    func quotaViolation() async throws {
        let a = Settings(inMemoryWith: .init())
        let limited = Settings(inMemoryWith: .init(limits: .iCloud))
        // Fine on a desktop, too long for iCloud's limits.
        try a.set(1, forKey: String(repeating: "k", count: 65))
        try a.set(2, forKey: "short")
        let recorder = EventRecorder()
        let token = limited.observe(.all, handler: recorder.handler)
        let link = InProcessLink(a, limited)
        try await waitUntil {
            limited.value(forKey: "short") == 2 && recorder.reasons.contains(.quotaViolation)
        }
        #expect(limited.keys() == ["short"])
        let violation = try #require(recorder.all.first { $0.reason == .quotaViolation })
        #expect(violation.keys == [String(repeating: "k", count: 65)])
        // On the wire a refusal names the refused version and is never read as a deletion.
        let refusal = try #require(violation.changes.first)
        #expect(refusal.refusedVersion != nil && refusal.value == nil)
        let event = WireMessage.event(watch: 1, violation)
        let text = event.serialized()
        #expect(text.contains("\"refused\":") && !text.contains("deleted"), "\(text)")
        guard case .event(_, let decoded) = try WireMessage.decode(JSONValue.parse(text)) else {
            Issue.record("not an event: \(text)")
            return
        }
        #expect(decoded == violation)
        link.disconnect()
        _ = token
    }

    @Test("@Setting owners fire for changes that arrive from a replica")
    func ownersHearRemoteChanges() async throws {
        let (a, b) = (Settings(inMemoryWith: .init()), Settings(inMemoryWith: .init()))
        let model = DisplayModel(store: b)
        _ = model.brightness
        let fired = Counter()
        let token = model.objectWillChange.sink { fired.increment() }
        let link = InProcessLink(a, b)
        try a.set(0.25, for: .brightness)
        try await waitUntil { fired.value == 1 }
        #expect(model.brightness == 0.25)
        link.disconnect()
        _ = token
    }
}
