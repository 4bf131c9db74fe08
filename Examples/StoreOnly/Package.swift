// swift-tools-version: 6.0
// An app outside the settingsd package that keeps its settings in a file of its own: it depends
// on the SettingsStore library alone, so it builds without any sync, daemon or GNOME code.
import PackageDescription

let package = Package(
    name: "StoreOnly",
    dependencies: [.package(name: "settingsd", path: "../..")],
    targets: [
        .executableTarget(
            name: "StoreOnly",
            dependencies: [.product(name: "SettingsStore", package: "settingsd")]
        )
    ],
    swiftLanguageModes: [.v6]
)
