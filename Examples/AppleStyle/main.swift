// Code as it is written for Apple platforms, built on Linux against settingsd: UserDefaults,
// NSUbiquitousKeyValueStore and an @AppStorage model. Only the import differs.
//
//   swift run apple-style-example                     # a tour
//   swift run apple-style-example set KEY VALUE        # UserDefaults.standard.set, then exit
//   swift run apple-style-example get KEY              # UserDefaults.standard.string(forKey:)
// (`--hold` after `set` waits to be killed: the tests SIGKILL it and read the value back.)
import Foundation
import SettingsFoundation
import SettingsStore

/// A model as a SwiftUI app declares one: `@AppStorage` properties, told of every change.
final class Preferences: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @AppStorage("username") var username = "Anonymous"
    @AppStorage("launchCount") var launchCount = 0
}

let defaults = SettingsDefaults.standard
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "set" where arguments.count >= 3:
    defaults.set(arguments[2], forKey: arguments[1])  // durable now: no synchronize() needed
    FileHandle.standardOutput.write(Data("set\n".utf8))
    if arguments.contains("--hold") { while true { pause() } }
case "get" where arguments.count == 2:
    print(defaults.string(forKey: arguments[1]) ?? "(none)")
default:
    defaults.register(defaults: ["volume": 0.5])
    print("volume:", defaults.double(forKey: "volume"))  // 0.5, registered, never stored
    let preferences = Preferences()
    preferences.launchCount += 1
    print("\(preferences.username), launch \(preferences.launchCount)")
    let cloud = NSUbiquitousKeyValueStore.default
    cloud.set("dark", forKey: "theme")
    print("theme:", cloud.string(forKey: "theme") ?? "(none)", "synchronize:", cloud.synchronize())
}
