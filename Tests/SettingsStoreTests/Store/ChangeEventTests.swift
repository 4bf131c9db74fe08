import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Change events after commits", .timeLimit(.minutes(2)))
struct ChangeEventTests {
    let settings = Settings(inMemoryWith: .init())

    @Test("an event carries exactly the changed keys, new values and reason")
    func eventContents() throws {
        let recorder = EventRecorder()
        let token = settings.observe(.all, handler: recorder.handler)
        try settings.set(0.7, for: .volume)
        try settings.removeValue(for: .volume)
        try settings.importValues(["a": 1])
        try settings.reset()
        #expect(recorder.keys == [["audio.volume"], ["audio.volume"], ["a"], ["a"]])
        #expect(recorder.reasons == [.local, .local, .import, .reset])
        let first = try #require(recorder.all.first)
        #expect(first.changes.first?.value == 0.7)
        #expect(first.origin == settings.replicaID)
        #expect(recorder.all[1].changes.first?.value == nil)
        token.cancel()
    }

    @Test("observers of key X are not woken by writes to key Y")
    func keyObserversAreSelective() throws {
        let volume = EventRecorder()
        let muted = EventRecorder()
        let tokens = [
            settings.observe(.volume, handler: volume.handler),
            settings.observe(.muted, handler: muted.handler),
        ]
        try settings.set(true, for: .muted)
        try settings.set(false, for: .muted)
        #expect(volume.all.isEmpty)
        #expect(muted.all.count == 2)
        _ = tokens
    }

    @Test("a key written twice in a transaction commits its last write, in the order of the last writes")
    func repeatedKeysCommitTheirLastWrite() throws {
        let recorder = EventRecorder()
        let token = settings.observe(.all, handler: recorder.handler)
        try settings.transaction { transaction in
            try transaction.set(1, forKey: "a")
            try transaction.set(2, forKey: "b")
            try transaction.set(3, forKey: "a")
            try transaction.set(4, forKey: "c")
            try transaction.set(5, forKey: "b")
        }
        #expect(recorder.keys == [["a", "c", "b"]])
        #expect(recorder.all.first?.changes.map(\.value) == [3, 4, 5])
        #expect(settings.value(forKey: "a") == 3 && settings.value(forKey: "b") == 5)
        // A batch with each key once is committed as written.
        try settings.transaction { transaction in
            for index in 0..<100 { try transaction.set(index, forKey: "once.\(index)") }
        }
        #expect(recorder.keys.last == (0..<100).map { "once.\($0)" })
        token.cancel()
    }

    @Test("a transaction of several keys is one event, restricted to each observer's keys")
    func transactionIsOneEvent() throws {
        let everything = EventRecorder()
        let volumeOnly = EventRecorder()
        let tokens = [
            settings.observe(.all, handler: everything.handler),
            settings.observe(.volume, handler: volumeOnly.handler),
        ]
        try settings.transaction { transaction in
            try transaction.set(0.1, for: .volume)
            try transaction.set(true, for: .muted)
            try transaction.set(3, for: .launchCount)
        }
        #expect(everything.keys == [["audio.volume", "audio.muted", "app.launchCount"]])
        #expect(volumeOnly.keys == [["audio.volume"]])
        _ = tokens
    }

    @Test("prefix observers see only keys under their prefixes")
    func prefixObservers() throws {
        let recorder = EventRecorder()
        let token = settings.observe(.prefixes(["audio."]), handler: recorder.handler)
        try settings.set(1, forKey: "audio.volume")
        try settings.set(1, forKey: "audiobook")
        try settings.transaction { transaction in
            try transaction.set(2, forKey: "audio.balance")
            try transaction.set(2, forKey: "video.size")
        }
        #expect(recorder.keys == [["audio.volume"], ["audio.balance"]])
        _ = token
    }

    @Test("a cancelled or released token stops events and frees the observer")
    func tokensEndSubscriptions() throws {
        let recorder = EventRecorder()
        let token = settings.observe(.all, handler: recorder.handler)
        do {
            _ = settings.observe(.all, handler: recorder.handler)
        }
        #expect(settings.observerCount == 1)
        try settings.set(1, forKey: "a")
        token.cancel()
        try settings.set(2, forKey: "a")
        #expect(recorder.all.count == 1)
        #expect(settings.observerCount == 0)
    }

    @Test("removing a key that holds no value announces nothing")
    func noOpRemoval() throws {
        let recorder = EventRecorder()
        let token = settings.observe(.all, handler: recorder.handler)
        try settings.removeValue(forKey: "never.set")
        #expect(recorder.all.isEmpty)
        #expect(settings.sequence == 0)
        _ = token
    }

    @Test("the async sequence delivers changes in commit order")
    func asyncSequence() async throws {
        let changes = settings.changes(.keys(["app.launchCount"]))
        for _ in 0..<3 { try settings.update(.launchCount) { $0 += 1 } }
        try settings.set(true, for: .muted)
        var values: [SettingValue?] = []
        for await change in changes {
            values.append(change.changes.first?.value)
            if values.count == 3 { break }
        }
        #expect(values == [1, 2, 3])
    }

    @Test("cancelling the consuming task ends the subscription and frees it")
    func asyncCancellation() async throws {
        let started = AsyncStream.makeStream(of: Void.self)
        let task = Task { [settings] in
            var count = 0
            started.continuation.yield()
            for await _ in settings.changes() { count += 1 }
            return count
        }
        for await _ in started.stream { break }
        #expect(settings.observerCount == 1)
        task.cancel()
        _ = await task.value
        #expect(settings.observerCount == 0)
    }

    @Test("handlers may write to the store without deadlock; their changes follow in order")
    func reentrantHandlers() throws {
        let recorder = EventRecorder()
        let echo = settings.observe(.volume) { [settings] change in
            try? settings.set(true, for: .muted)  // The test checks the effect, not this result.
        }
        let token = settings.observe(.all, handler: recorder.handler)
        try settings.set(0.3, for: .volume)
        #expect(recorder.keys == [["audio.volume"], ["audio.muted"]])
        _ = (echo, token)
    }
}
