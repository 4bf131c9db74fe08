import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("ObjectWillChangePublisher", .timeLimit(.minutes(2)))
struct ObjectWillChangePublisherTests {
    @Test("send reaches every sink until its token is cancelled or released")
    func sinks() {
        let publisher = ObjectWillChangePublisher()
        let first = Counter()
        let second = Counter()
        let token = publisher.sink { first.increment() }
        do {
            let scoped = publisher.sink { second.increment() }
            publisher.send()
            _ = scoped
        }
        publisher.send()
        token.cancel()
        publisher.send()
        #expect(first.value == 2)
        #expect(second.value == 1)
        #expect(publisher.subscriberCount == 0)
    }

    @Test("the publisher is an async sequence of sends")
    func asyncSequence() async {
        let publisher = ObjectWillChangePublisher()
        var iterator = publisher.makeAsyncIterator()
        publisher.send()
        let element: Void? = await iterator.next()
        #expect(element != nil)
    }

    @Test("sinkOnMainActor delivers on the main actor")
    func mainActorDelivery() async {
        let publisher = ObjectWillChangePublisher()
        await withCheckedContinuation { continuation in
            let token = publisher.sinkOnMainActor {
                MainActor.assertIsolated()
                continuation.resume()
            }
            publisher.send()
            Task { @MainActor in withExtendedLifetime(token) {} }
        }
    }
}
