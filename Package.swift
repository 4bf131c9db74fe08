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
        // A store of typed settings in an app's own file: values, keys, observation, schemas.
        .library(name: "SettingsStore", targets: ["SettingsStore"]),
        // The daemon's clients: SettingsClient (async) and the typed service, over its socket.
        .library(name: "SettingsDaemonClient", targets: ["SettingsDaemonClient"]),
        // Syncing a store with other replicas: socket and SSH peers, synced folders, the PostgreSQL hub.
        .library(name: "SettingsSync", targets: ["SettingsSync"]),
        // GSettings schemas, GVariant, dconf and the live dconf bridge.
        .library(name: "SettingsGNOME", targets: ["SettingsGNOME"]),
        // A whole daemon in a process of one's own: server, links, bridge, housekeeping.
        .library(name: "SettingsDaemonKit", targets: ["SettingsDaemonKit"]),
        // UserDefaults, NSUbiquitousKeyValueStore and @AppStorage on settingsd.
        .library(name: "SettingsFoundation", targets: ["SettingsFoundation"]),
        .executable(name: "settingsd", targets: ["settingsd"]),
        .executable(name: "settingsd-daemon", targets: ["settingsd-daemon"]),
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
            // libdconf's and GLib's declarations: the libraries are opened on first use (see shim.h).
            name: "CDconf"
        ),
        .systemLibrary(
            // libsecret's and GLib's declarations: the libraries are opened on first use (see
            // shim.h), by SettingsSync/Sealing's SecretServiceKeys only.
            name: "CSecret"
        ),
        .systemLibrary(
            // libsodium: the ciphers and hashes sealed sync uses (SettingsSync/Sealing only).
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            // Linux headers the Glibc module leaves out: malloc.h (malloc_trim after a store loads,
            // see HeapRelease.swift), sys/epoll.h (the daemon's event loop, PollLoop.swift) and
            // posix_spawn's close-everything action (the test fixtures' servers).
            name: "CLinux"
        ),
        .target(
            // The store: values, keys, JSON, versions, events, SQLite, storage, policy, the store
            // itself and observation. Nothing of sync, the daemon or GNOME.
            name: "SettingsStore",
            dependencies: ["CSQLite", "CLinux"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // GVariant, GSettings' schemas, dconf (libdconf, opened on first use) and the bridge.
            name: "SettingsGNOME",
            dependencies: ["SettingsStore", "CDconf"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // The wire protocol (frames, requests, answers, hellos) and the transports it runs on.
            name: "SettingsWire",
            dependencies: ["SettingsStore"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // Replication: sessions between replicas, the links that carry them, the PostgreSQL hub.
            name: "SettingsSync",
            dependencies: ["SettingsStore", "SettingsWire", "CLibPQ", "CLinux", "CSodium", "CSecret"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // The daemon's typed service and its clients.
            name: "SettingsDaemonClient",
            dependencies: ["SettingsStore", "SettingsWire"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // The daemon: its server, request handling, policy watching, housekeeping, signals.
            name: "SettingsDaemonKit",
            dependencies: [
                "SettingsStore", "SettingsWire", "SettingsSync", "SettingsDaemonClient", "SettingsGNOME",
                "CLinux",
            ],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // UserDefaults, NSUbiquitousKeyValueStore and @AppStorage on settingsd, for code from
            // Apple platforms: the one library that needs all of Foundation.
            name: "SettingsFoundation",
            dependencies: ["SettingsStore", "SettingsSync", "SettingsDaemonClient"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // `settingsd browse`: the keys in a terminal, live (termios and escape sequences: the
            // terminal layer, the model, the views, the loop).
            name: "SettingsBrowser",
            dependencies: ["SettingsStore", "SettingsWire", "SettingsDaemonClient", "SettingsGNOME", "SettingsDaemonKit"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            // The command line: parsing, every command, output. Both executables are this module.
            name: "SettingsCommandLine",
            dependencies: [
                "SettingsStore", "SettingsWire", "SettingsSync", "SettingsDaemonClient", "SettingsGNOME",
                "SettingsDaemonKit", "SettingsBrowser",
            ],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            // Linked statically: without the dynamic loader a command starts in ~1 ms, not ~2.
            // A static binary cannot load libpq, so `run` and `hub` continue in settingsd-daemon,
            // which is listed so that building settingsd builds it too. lld links it: gold repeats
            // glibc's notes on NSS in static programs at every link (docs/ARCHITECTURE.md covers them).
            name: "settingsd",
            dependencies: ["SettingsCommandLine", "settingsd-daemon"],
            swiftSettings: upcomingFeatures + [
                .unsafeFlags(["-static-executable"], .when(platforms: [.linux]))
            ],
            linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=lld"], .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "settingsd-daemon",
            dependencies: ["SettingsCommandLine"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "PostgresFixture",
            // A private PostgreSQL cluster for the hub tests and the hub benchmark.
            dependencies: ["SettingsStore", "SettingsSync", "CLinux"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "settings-bench",
            // The bench measures the raw libsqlite3 and libpq floors, so it talks to the C APIs directly
            // (and tunes its own allocator for the fleet simulation: CLinux).
            dependencies: [
                "SettingsStore", "SettingsWire", "SettingsSync", "SettingsDaemonClient", "SettingsGNOME",
                "SettingsDaemonKit", "CSQLite", "CLibPQ", "CLinux", "PostgresFixture",
            ],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "settings-example",
            dependencies: ["SettingsStore"],
            path: "Examples/PlayerSettings",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            // Code written for Apple platforms (UserDefaults, NSUbiquitousKeyValueStore,
            // @AppStorage) on settingsd; the SettingsFoundation tests run it.
            name: "apple-style-example",
            dependencies: ["SettingsFoundation", "SettingsStore"],
            path: "Examples/AppleStyle",
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "SettingsStoreTests",
            // The daemon tests start the settingsd and settingsd-daemon binaries, which `swift test`
            // builds with every other product. Listing settingsd here would link its static
            // executable flags into the test bundle.
            dependencies: [
                "SettingsStore", "SettingsWire", "SettingsSync", "SettingsDaemonClient", "SettingsGNOME",
                "SettingsDaemonKit", "SettingsFoundation", "SettingsBrowser", "PostgresFixture",
            ],
            // Every help text, verbatim, as `settingsd help` must print it (read by CommandLineTests).
            // The browser's screens, as the terminal shows them (read by BrowserTerminalTests).
            // GLib's parser, printer and range check in Python: the GSettings tests' oracle.
            exclude: ["CommandLine/Help", "Browser/Screens", "GSettings/Oracle", "Support/ClockShim"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
