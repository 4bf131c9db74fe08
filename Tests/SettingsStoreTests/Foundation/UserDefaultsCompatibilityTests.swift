import Foundation
import SettingsFoundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

/// Foundation's own `UserDefaults` behaviours, held against `SettingsDefaults`, with every
/// difference from Foundation named (docs/APPLE.md says why).
@Suite("SettingsDefaults behaves as Foundation's UserDefaults, differences named")
struct UserDefaultsCompatibilityTests {
    /// Where SettingsDefaults deliberately differs from swift-corelibs-foundation, and why.
    static let differences: [String: String] = [
        "set Float 12.34 → string \"12.34\"":
            "a Float is kept as the Double it widens to (settingsd has one floating type), so it prints as 12.34000015258789"
    ]

    @Test("each of Foundation's behaviours, on SettingsDefaults and on Foundation's UserDefaults")
    func behaviours() throws {
        let store = Settings(inMemoryWith: .init())
        let ours = try #require(SettingsDefaults(settings: store, suiteName: "compat"))
        let suite = "settingsd.compat.\(getpid()).\(UUID().uuidString.prefix(8))"
        let foundation = try #require(UserDefaults(suiteName: suite))
        defer { foundation.removePersistentDomain(forName: suite) }
        var differing: [String] = []
        for (index, behaviour) in UserDefaultsBehaviours.all.enumerated() {
            let key = "key\(index)-\(UUID().uuidString.prefix(6))"
            let foundationPasses = behaviour.check(foundation, key)
            let oursPasses = behaviour.check(ours, key)
            #expect(foundationPasses, "Foundation itself: \(behaviour.name)")
            if oursPasses != foundationPasses { differing.append(behaviour.name) }
            if Self.differences[behaviour.name] == nil {
                #expect(oursPasses, "SettingsDefaults: \(behaviour.name)")
            }
        }
        #expect(UserDefaultsBehaviours.all.count == 36)
        #expect(Set(differing) == Set(Self.differences.keys), "\(differing)")
    }
}
