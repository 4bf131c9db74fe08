import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A child that only gets a binding, like a SwiftUI subview.
final class VolumeSlider {
    let volume: SettingBinding<Double>

    init(volume: SettingBinding<Double>) {
        self.volume = volume
    }

    func nudge() throws { try volume.update { $0 += 0.1 } }
}

@Suite("SettingBinding and the environment", .timeLimit(.minutes(2)))
struct SettingBindingTests {
    let settings = Settings(inMemoryWith: .init())

    @Test("a binding handed to a child reads, writes, updates and resets the owner's setting")
    func childBinding() throws {
        let model = DisplayModel(store: settings)
        let slider = VolumeSlider(volume: model.$brightness)
        #expect(slider.volume.isDefault)
        slider.volume.wrappedValue = 0.5
        try slider.nudge()
        #expect(model.brightness == 0.6)
        #expect(!slider.volume.isDefault)
        try slider.volume.reset()
        #expect(model.brightness == 1)
    }

    @Test("binding values start with the current value and follow changes")
    func values() async throws {
        let binding = SettingBinding(.fontSize, in: settings)
        var iterator = binding.values.makeAsyncIterator()
        #expect(await iterator.next() == 12)
        try binding.set(20)
        #expect(await iterator.next() == 20)
    }

    @Test("a task-local store scopes the models made inside it")
    func taskLocalEnvironment() throws {
        let other = Settings(inMemoryWith: .init())
        try other.set(3, for: .fontSize)
        let model = SettingsEnvironment.$current.withValue(other) {
            let model = MainActorFreeModel()
            _ = model.fontSize
            return model
        }
        #expect(model.fontSize == 3)
        #expect(SettingsEnvironment.resolved == nil)
    }
}

final class MainActorFreeModel: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @Setting(.fontSize) var fontSize
}
