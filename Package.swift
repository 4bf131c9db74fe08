// swift-tools-version: 6.0
import PackageDescription

/// Upcoming language features every target adopts, as swift-sharing does.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "settingsd",
    products: [
        .library(name: "SettingsStore", targets: ["SettingsStore"]),
        .executable(name: "settingsd", targets: ["settingsd"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            // libpq's header only: the library is opened on first use (see shim.h).
            name: "CLibPQ",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            // glibc's malloc.h, for malloc_trim after a store loads (see HeapRelease.swift).
            name: "CMalloc"
        ),
        .target(
            name: "SettingsStore",
            dependencies: ["CSQLite", "CLibPQ", "CMalloc"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "settingsd",
            dependencies: ["SettingsStore"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "PostgresFixture",
            // A private PostgreSQL cluster for the hub tests and the hub benchmark.
            dependencies: ["SettingsStore"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "settings-bench",
            // The bench measures the raw libsqlite3 and libpq floors, so it talks to the C APIs directly.
            dependencies: ["SettingsStore", "CSQLite", "CLibPQ", "PostgresFixture"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "settings-example",
            dependencies: ["SettingsStore"],
            path: "Examples/PlayerSettings",
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "SettingsStoreTests",
            // settingsd is listed so `swift test` builds the binary the daemon tests start.
            dependencies: ["SettingsStore", "settingsd", "PostgresFixture"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
