// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "settingsd",
    products: [
        .library(name: "SettingsStore", targets: ["SettingsStore"]),
        .executable(name: "settingsd", targets: ["settingsd"]),
        .executable(name: "settings-bench", targets: ["settings-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "SettingsStore",
            dependencies: ["CSQLite"]
        ),
        .executableTarget(
            name: "settingsd",
            dependencies: ["SettingsStore"]
        ),
        .executableTarget(
            name: "settings-bench",
            // The bench measures the raw libsqlite3 floor, so it talks to the C API directly.
            dependencies: ["SettingsStore", "CSQLite"]
        ),
        .executableTarget(
            name: "settings-example",
            dependencies: ["SettingsStore"],
            path: "Examples/PlayerSettings"
        ),
        .testTarget(
            name: "SettingsStoreTests",
            // settingsd is listed so `swift test` builds the binary the daemon tests start.
            dependencies: ["SettingsStore", "settingsd"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
