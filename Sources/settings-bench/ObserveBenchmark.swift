import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire
import Synchronization

/// A model with one setting, for the observe benchmark.
private final class BenchModel: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @Setting<Int> var value: Int

    init(key: String, store: Settings) {
        _value = Setting(SettingKey(key, default: 0), store: store)
    }
}

/// `settings-bench observe`: @Setting reads beside plain store reads, and set-to-notification latency.
struct ObserveBenchmark {
    let quick: Bool

    func run() {
        runSuite { scratch in
            var report = Report(title: "observe")
            let settings = try Settings(path: scratch.file("observe.sqlite"))
            try reads(into: &report, settings: settings)
            try notificationLatency(into: &report, settings: settings, label: "durable set")
            try notificationLatency(
                into: &report, settings: Settings(inMemoryWith: .init()), label: "in-memory set")
            report.print()
        }
    }

    private func reads(into report: inout Report, settings: Settings) throws {
        let key = SettingKey<Int>("bench.read", default: 0)
        try settings.set(7, for: key)
        let model = BenchModel(key: "bench.read", store: settings)
        let count = quick ? 200_000 : 2_000_000
        var sink = 0
        let rates = alternating(
            ours: { measureRate(count) { _ in sink &+= model.value } },
            peer: { measureRate(count) { _ in sink &+= settings[key] } })
        report.rate(
            "@Setting property read", ours: rates.ours, peer: rates.peer, peerName: "store read",
            target: .ratio(atLeast: 0.5))
        if sink == 1 { print(sink) }
    }

    private func notificationLatency(into report: inout Report, settings: Settings, label: String) throws {
        let owners = (0..<100).map { BenchModel(key: "bench.owner.\($0)", store: settings) }
        let clock = ContinuousClock()
        let sentAt = Mutex<ContinuousClock.Instant?>(nil)
        let latencies = Mutex<[Duration]>([])
        var tokens: [SubscriptionToken] = []
        for owner in owners {
            _ = owner.value  // subscribes the owner to its key
            tokens.append(
                owner.objectWillChange.sink {
                    guard let start = sentAt.withLock({ $0 }) else { return }
                    let elapsed = clock.now - start
                    latencies.withLock { $0.append(elapsed) }
                })
        }
        let count = quick ? 2_000 : 20_000
        for index in 0..<count {
            sentAt.withLock { $0 = clock.now }
            try settings.set(index, forKey: "bench.owner.\(index % owners.count)")
        }
        let sorted = latencies.withLock { $0 }.map(\.seconds).sorted()
        guard sorted.count == count else {
            throw SettingsError(.sqlite, "expected \(count) notifications, got \(sorted.count)")
        }
        report.latency("set -> objectWillChange, 100 owners (\(label))", sorted: sorted, target: .reported)
        withExtendedLifetime(tokens) {}
    }
}
