import SettingsStore

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

extension SettingKeys {
    static let volume = SettingKey<Double>("audio.volume", default: 0.5)
    static let muted = SettingKey<Bool>("audio.muted", default: false)
    static let launchCount = SettingKey<Int>("app.launchCount", default: 0)
    static let userName = SettingKey<String?>("user.name")
    static let theme = SettingKey<Theme>("ui.theme", default: .light)
}

enum Theme: String, Codable, SettingValueConvertible {
    case light, dark
}
