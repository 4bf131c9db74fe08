import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// Seeded random runs over live links whose directions stall and resume (frames held back, then
/// delivered late and in order, as on a congested network) and whose connections drop and are
/// dialled again: comparisons cross replication and each other in every order. Once everything is delivered and nobody writes, every pair of
/// replicas must end agreed, on both sides; a verdict left `checking`, `diverged` or `unknown`
/// with nothing to start the next comparison fails the run.
@Suite("Replica sync: seeded random stalls on live links end agreed", .timeLimit(.minutes(2)))
struct StalledLinkTests {
    @Test(
        "after stalls, late frames and writes everywhere, every pair ends agreed on both sides",
        arguments: 0..<4)
    func stallsEndAgreed(round: Int) async throws {
        let seed = SeededGenerator.seed &+ UInt64(round)
        var random = SeededGenerator(seed: seed)
        let stores = (0..<Int.random(in: 3...4, using: &random)).map { _ in Settings(inMemoryWith: .init()) }
        // A full mesh: every write has a direct path and relayed ones, so frames race.
        var pairs: [(Int, Int)] = []
        for first in stores.indices {
            for second in stores.indices where second > first { pairs.append((first, second)) }
        }
        // Sometimes two connections join a pair (both sides dial): one sends, one stands by.
        if Bool.random(using: &random) { pairs.append((1, 0)) }
        var links = pairs.map { InProcessLink(stores[$0.0], stores[$0.1]) }
        defer { for link in links { link.disconnect() } }
        var held: Set<[Int]> = []  // [link, direction]
        let keys = (0..<8).map { "key.\($0)" }
        for step in 0..<SuiteScale.pick(ci: 200, full: 2_000) {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let writer = stores[Int.random(in: 0..<stores.count, using: &random)]
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                try writer.set(step, forKey: key)
            case 45..<60:
                let stall = [
                    Int.random(in: 0..<links.count, using: &random), Int.random(in: 0...1, using: &random),
                ]
                links[stall[0]].hold(toB: stall[1] == 1)
                held.insert(stall)
            case 60..<78:
                guard let resume = held.randomElement(using: &random) else { continue }
                links[resume[0]].release(toB: resume[1] == 1)
                held.remove(resume)
            case 78..<82:
                // The connection drops with whatever it held, and is dialled again.
                let index = Int.random(in: 0..<links.count, using: &random)
                links[index].disconnect()
                links[index] = InProcessLink(stores[pairs[index].0], stores[pairs[index].1])
                held = held.filter { $0[0] != index }
            default:
                try await Task.sleep(for: .milliseconds(Int.random(in: 0..<8, using: &random)))
            }
        }
        for stall in held { links[stall[0]].release(toB: stall[1] == 1) }
        do {
            try await waitForAgreement(of: stores)
        } catch {
            Issue.record("seed \(seed): \(error)")
            throw error
        }
        for store in stores.dropFirst() {
            for key in keys {
                #expect(store.value(forKey: key) == stores[0].value(forKey: key), "seed \(seed)")
            }
        }
    }
}
