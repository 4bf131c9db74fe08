import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SettingKeys {
    static let brightness = SettingKey<Double>("display.brightness", default: 1)
    static let contrast = SettingKey<Double>("display.contrast", default: 1)
    static let fontSize = SettingKey<Int>("display.fontSize", default: 12)
    static let fontName = SettingKey<String>("display.fontName", default: "Inter")
    static let accent = SettingKey<String>("display.accent", default: "blue")
}

final class DisplayModel: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @Setting(.brightness) var brightness
    @Setting(.contrast) var contrast
    @Setting(.fontSize) var fontSize
    @Setting(.fontName) var fontName
    @Setting(.accent) var accent
    @Setting("display.theme") var theme = "light"

    init(store: Settings) {
        _brightness = Setting(.brightness, store: store)
        _contrast = Setting(.contrast, store: store)
        _fontSize = Setting(.fontSize, store: store)
        _fontName = Setting(.fontName, store: store)
        _accent = Setting(.accent, store: store)
        _theme = Setting(wrappedValue: "light", "display.theme", store: store)
    }
}

@MainActor
final class MainActorModel: SettingsOwner {
    let objectWillChange = ObjectWillChangePublisher()
    @Setting(.brightness) var brightness
}

@Suite("@Setting on SettingsOwner classes", .timeLimit(.minutes(2)))
struct SettingOwnerTests {
    let settings = Settings(inMemoryWith: .init())

    @Test("reads the default, writes through the store, and a string key takes its initial value as default")
    func readsAndWrites() throws {
        let model = DisplayModel(store: settings)
        #expect(model.brightness == 1)
        #expect(model.theme == "light")
        model.brightness = 0.4
        model.theme = "dark"
        #expect(settings[.brightness] == 0.4)
        #expect(settings["display.theme"] == "dark")
    }

    @Test("the owner fires once per change of a key it used, and never for other keys")
    func firesOncePerChangeOfItsKeys() throws {
        let model = DisplayModel(store: settings)
        let fired = Counter()
        let token = model.objectWillChange.sink { fired.increment() }
        _ = model.brightness
        try settings.set(0.5, for: .brightness)
        try settings.set(0.6, for: .brightness)
        try settings.set(2, for: .contrast)  // never read by this model
        try settings.set(true, forKey: "unrelated")
        #expect(fired.value == 2)
        _ = token
    }

    @Test("the subscription is lazy: nothing is observed before a property is used")
    func lazySubscription() {
        let model = DisplayModel(store: settings)
        #expect(settings.observerCount == 0)
        model.fontSize = 14
        #expect(settings.observerCount == 1)
        _ = model.fontName
        #expect(settings.observerCount == 1)  // one store observation per owner, covering both keys
    }

    @Test("changes from another thread and from another object reach the owner")
    func changesFromElsewhere() async throws {
        let model = DisplayModel(store: settings)
        let other = DisplayModel(store: settings)
        _ = model.accent
        let fired = Counter()
        let token = model.objectWillChange.sink { fired.increment() }
        other.accent = "red"
        await Task.detached { [settings] in try? settings.set("green", for: .accent) }.value
        #expect(fired.value == 2)
        #expect(model.accent == "green")
        _ = token
    }

    @Test("a transaction that changes five keys the owner reads fires it once")
    func batching() throws {
        let model = DisplayModel(store: settings)
        _ = (model.brightness, model.contrast, model.fontSize, model.fontName, model.accent)
        let fired = Counter()
        let token = model.objectWillChange.sink { fired.increment() }
        try settings.transaction { transaction in
            try transaction.set(0.1, for: .brightness)
            try transaction.set(0.2, for: .contrast)
            try transaction.set(16, for: .fontSize)
            try transaction.set("Mono", for: .fontName)
            try transaction.set("red", for: .accent)
        }
        #expect(fired.value == 1)
        _ = token
    }

    @Test("releasing the owner removes its store subscription")
    func deallocationFrees() {
        weak var released: DisplayModel?
        do {
            let model = DisplayModel(store: settings)
            _ = model.brightness
            released = model
            #expect(settings.observerCount == 1)
        }
        #expect(released == nil)
        #expect(settings.observerCount == 0)
    }

    @Test("a @MainActor owner works and can be told on the main actor")
    @MainActor
    func mainActorOwner() async throws {
        let model = SettingsEnvironment.$current.withValue(settings) { MainActorModel() }
        try await SettingsEnvironment.$current.withValue(settings) {
            #expect(model.brightness == 1)
            await withCheckedContinuation { continuation in
                let token = model.objectWillChange.sinkOnMainActor {
                    MainActor.assertIsolated()
                    continuation.resume()
                }
                try? settings.set(0.3, for: .brightness)
                Task { @MainActor in withExtendedLifetime(token) {} }
            }
            #expect(model.brightness == 0.3)
            try settings.set(0.2, for: .brightness)
        }
    }

    @Test("a refused write is reported to onError and changes nothing")
    func refusedWrite() {
        let reported = ReportedErrors()
        let limited = Settings(
            inMemoryWith: .init(
                limits: SettingsLimits(maximumKeyBytes: 64, maximumValueBytes: 8),
                onError: { reported.append($0) }))
        let model = DisplayModel(store: limited)
        model.fontName = "A name far longer than eight bytes"
        #expect(model.fontName == "Inter")
        #expect(reported.codes == [.limitExceeded])
    }
}
