import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// No number a caller gives a public configuration can crash the process: each is clamped by the
/// rule its property documents, and the store, the server and the links then run with it.
@Suite("Public configuration: out-of-range numbers are clamped, never trapped on")
struct ConfigurationBoundsTests {
    let directory = TemporaryDirectory()

    private static let durations: [Duration] = [
        .zero, .seconds(-5), .nanoseconds(1), .seconds(Int64.max), .seconds(Int64.min),
        .milliseconds(Int64.max),
    ]
    private static let sizes = [Int.min, -1, 0, 1, Int.max]

    @Test("the store's durations and limits, at every extreme, open a store that reads and writes")
    func storeConfiguration() throws {
        for duration in Self.durations {
            for size in Self.sizes {
                var configuration = SettingsConfiguration()
                configuration.maximumClockSkew = duration
                configuration.tombstoneLifetime = duration
                configuration.history = HistoryRetention(keep: duration, maximumRecords: size)
                configuration.limits = SettingsLimits(
                    maximumKeyBytes: size, maximumValueBytes: size, maximumKeyCount: size,
                    maximumTotalBytes: size)
                let settings = try Settings(
                    path: directory.file("bounds.sqlite"), configuration: configuration)
                _ = try? settings.set("x", forKey: "k")
                _ = settings.value(forKey: "k")
                try settings.collectTombstones()
                settings.close()
                #expect(configuration.maximumClockSkew >= .seconds(1))
                #expect(configuration.limits.maximumKeyBytes >= 1)
            }
        }
    }

    @Test("the server's time-out and sizes, and the links' time-outs, at every extreme, serve and stop")
    func serverAndLinks() async throws {
        let settings = Settings(inMemoryWith: SettingsConfiguration())
        for (index, duration) in Self.durations.enumerated() {
            let socket = "/tmp/sdt-bounds-\(UUID().uuidString.prefix(8)).sock"
            var configuration = ServerConfiguration(
                socketPath: socket, maximumFrameBytes: Self.sizes[index % Self.sizes.count],
                outboundLimitBytes: Self.sizes[(index + 1) % Self.sizes.count],
                maximumWatchesPerConnection: Self.sizes[(index + 2) % Self.sizes.count])
            configuration.idleTimeout = duration
            configuration.maximumFrameBytes = max(
                configuration.maximumFrameBytes,
                ServerConfiguration.minimumFrameBytes(for: settings.configuration.limits))
            let server = try SettingsServer(settings: settings, configuration: configuration)
            try server.start()
            let client = try BlockingClient(socketPath: socket, timeout: 5)
            try client.request(.get(key: "k"))
            let peer = Settings(inMemoryWith: SettingsConfiguration())
            let link = peer.sync(with: socket, handshakeTimeout: duration)
            let hub = try? peer.sync(
                withHub: HubConfiguration(
                    url: "host=/nonexistent-\(index) dbname=none", namespace: "n", stallTimeout: duration))
            link.stop()
            hub?.stop()
            server.stop()
        }
    }
}
