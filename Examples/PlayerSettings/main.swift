// swift run settings-example [DATABASE]: a tour of the SettingsStore library.
import Foundation
import Observation
import SettingsStore

@MainActor
func tour(databasePath: String) async throws {
    let settings = try Settings(path: databasePath)
    SettingsEnvironment.setDefault(settings)  // @Setting properties without a store use this one

    let player = PlayerSettings()
    // Called after each commit that changes a key `player` has used, on the writing thread.
    let token = player.objectWillChange.sink {
        print("player settings changed: volume \(settings[.volume]), repeat \(settings[.repeatMode])")
    }

    player.volume = 0.8
    player.repeatMode = .all
    player.equalizer.bass = 2  // read-modify-write of a Codable value

    let knob = VolumeKnob(volume: player.$volume)
    try knob.turn(by: 0.1)

    let nowPlaying = NowPlaying()
    withObservationTracking {
        _ = nowPlaying.volume
    } onChange: {
        print("Observation saw the volume change")
    }
    try settings.set(0.3, for: .volume)  // a write from elsewhere reaches both models

    try settings.transaction { transaction in  // one commit, one notification for the player
        try transaction.set(RepeatMode.one, for: .repeatMode)
        try transaction.set("Blue in Green", forKey: "player.lastTrack")
    }
    print("stored:", settings.snapshot().sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
    token.cancel()
}

let path =
    CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "settings-example/settings.sqlite"
do {
    try await tour(databasePath: path)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
