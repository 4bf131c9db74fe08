import Observation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Observable
final class AudioModel {
    @ObservationIgnored @Setting(.volume) var volume
    @ObservationIgnored @Setting(.muted) var muted
    var title = "Audio"
}

@MainActor
@Observable
final class MainActorAudioModel {
    @ObservationIgnored @Setting(.volume) var volume
}

@Observable
final class RootModel {
    var audio = AudioModel()
}

@Suite("@Setting and the Observation framework", .timeLimit(.minutes(2)))
struct ObservationTests {
    let settings = Settings(inMemoryWith: .init())

    /// Runs `tracked` under observation tracking and returns a counter of onChange calls.
    func track(_ tracked: @escaping () -> Void) -> Counter {
        let fired = Counter()
        withObservationTracking(tracked) { fired.increment() }
        return fired
    }

    @Test("tracking a setting fires on a local write and on a write from elsewhere")
    func localAndExternalChanges() throws {
        try SettingsEnvironment.$current.withValue(settings) {
            let model = AudioModel()
            let local = track { _ = model.volume }
            model.volume = 0.9
            #expect(local.value == 1)
            let external = track { _ = model.volume }
            try settings.set(0.1, for: .volume)
            #expect(external.value == 1)
            #expect(model.volume == 0.1)
        }
    }

    @Test("tracking one setting does not fire for another key")
    func onlyTrackedKeys() throws {
        try SettingsEnvironment.$current.withValue(settings) {
            let model = AudioModel()
            _ = model.muted  // used, so it is subscribed too
            let fired = track { _ = model.volume }
            try settings.set(true, for: .muted)
            try settings.set(1, forKey: "other")
            #expect(fired.value == 0)
        }
    }

    @Test("nested models: tracking a.b.volume fires when b's setting changes")
    func nestedModels() throws {
        try SettingsEnvironment.$current.withValue(settings) {
            let root = RootModel()
            let fired = track { _ = root.audio.volume }
            try settings.set(0.25, for: .volume)
            #expect(fired.value == 1)
        }
    }

    @Test("Observations streams the current value, then external changes")
    @MainActor
    func observationsStream() async throws {
        let model = SettingsEnvironment.$current.withValue(settings) { MainActorAudioModel() }
        let values = Observations { model.volume }
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 0.5)
        try settings.set(0.75, for: .volume)
        #expect(await iterator.next() == 0.75)
    }
}
