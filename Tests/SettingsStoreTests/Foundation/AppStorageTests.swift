import Foundation
import Observation
import SettingsFoundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A model written as with SwiftUI's `@AppStorage` (`@AppStorage("username") var username =
/// "Anonymous"`), given a suite of its own so that the test never touches the standard store.
final class AccountModel: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @AppStorage var username: String
    @AppStorage var launchCount: Int

    init(defaults: SettingsDefaults) {
        _username = AppStorage(wrappedValue: "Anonymous", "username", store: defaults)
        _launchCount = AppStorage(wrappedValue: 0, "launchCount", store: defaults)
    }
}

/// The same in an `@Observable` model, as SwiftUI's documentation writes it.
@Observable final class ObservableAccount {
    @ObservationIgnored @AppStorage var username: String

    init(defaults: SettingsDefaults) {
        _username = AppStorage(wrappedValue: "Anonymous", "username", store: defaults)
    }
}

@Suite("@AppStorage on settingsd: the suite's keys, the owner told of every change")
struct AppStorageTests {
    @Test("reads the default, shares values with UserDefaults calls, notifies its owner of other writers")
    func appStorage() throws {
        let store = Settings(inMemoryWith: .init())
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "account"))
        let model = AccountModel(defaults: defaults)
        #expect(model.username == "Anonymous")
        let changes = NotificationCount()
        let token = model.objectWillChange.sink { changes.increment() }
        defer { token.cancel() }
        defaults.set("ada", forKey: "username")
        #expect(model.username == "ada")
        #expect(changes.value == 1)
        model.launchCount += 1
        #expect(defaults.integer(forKey: "launchCount") == 1)
        #expect(store.value(forKey: "suite.account/launchCount") == 1)
        #expect(model.$username.wrappedValue == "ada")
    }

    @Test("in an @Observable model, Observation hears of another writer's change of the key it read")
    func observableModel() throws {
        let store = Settings(inMemoryWith: .init())
        let defaults = try #require(SettingsDefaults(settings: store, suiteName: "observed"))
        let model = ObservableAccount(defaults: defaults)
        let fired = NotificationCount()
        withObservationTracking {
            _ = model.username
        } onChange: {
            fired.increment()
        }
        defaults.set("grace", forKey: "username")
        #expect(fired.value == 1)
        #expect(model.username == "grace")
    }
}
