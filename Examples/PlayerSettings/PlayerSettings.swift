import Observation
import SettingsStore

// Keys are declared once, with their types and defaults.
extension SettingKeys {
    static let volume = SettingKey<Double>("player.volume", default: 0.5)
    static let repeatMode = SettingKey<RepeatMode>("player.repeat", default: .off)
    static let equalizer = SettingKey<Equalizer>("player.equalizer", default: Equalizer())
}

enum RepeatMode: String, SettingValueConvertible {
    case off, one, all
}

/// A Codable value is stored as a structured dictionary, not a string.
struct Equalizer: Codable, Equatable, SettingValueConvertible {
    var bass = 0.0
    var treble = 0.0
}

/// A model in the `ObservableObject` style: `objectWillChange` fires when a setting it uses changes.
final class PlayerSettings: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @Setting(.volume) var volume
    @Setting(.repeatMode) var repeatMode
    @Setting(.equalizer) var equalizer
    @Setting("player.lastTrack") var lastTrack = ""
}

/// A model in the Observation style: tracking `nowPlaying.volume` sees every change of the key.
@Observable
final class NowPlaying {
    @ObservationIgnored @Setting(.volume) var volume
    var title = "Nothing"
}

/// A child object that gets only a binding, like a SwiftUI subview.
final class VolumeKnob {
    let volume: SettingBinding<Double>

    init(volume: SettingBinding<Double>) {
        self.volume = volume
    }

    func turn(by step: Double) throws {
        try volume.update { $0 = min(1, max(0, $0 + step)) }
    }
}
