import Observation
import Synchronization

/// The per-property state behind one `@Setting`: its store, once resolved, and the subscriptions
/// that make its owner hear about changes, set up the first time the property is used.
final class SettingSlot: Sendable {
    private struct State {
        var settings: Settings?
        var isPrepared = false
        var observed: (any ObservationAccess)?
        var observationToken: SubscriptionToken?
    }

    let name: String
    private let state: Mutex<State>

    /// Binds to `store`, else to the environment's store now (when the owner is made), else to the
    /// environment's store when the property is first used.
    init(name: String, store: Settings?) {
        self.name = name
        self.state = Mutex(State(settings: store ?? SettingsEnvironment.resolved))
    }

    /// The store the property reads and writes.
    var settings: Settings {
        state.withLock { resolve(&$0) }
    }

    /// Prepares the owner's subscriptions on first use, reports the access to Observation
    /// tracking, and returns the store.
    func use<Owner: AnyObject, Value>(by owner: Owner, through keyPath: KeyPath<Owner, Value>) -> Settings {
        let (settings, observed) = state.withLock { state in
            let settings = resolve(&state)
            if !state.isPrepared { prepare(&state, settings: settings, owner: owner, keyPath: keyPath) }
            return (settings, state.observed)
        }
        observed?.recordAccess()
        return settings
    }

    private func resolve(_ state: inout State) -> Settings {
        if let settings = state.settings { return settings }
        guard let environment = SettingsEnvironment.resolved else {
            fatalError(
                """
                @Setting("\(name)") has no store: pass one (@Setting(..., store: settings)) or set \
                SettingsEnvironment.setDefault(_:) or SettingsEnvironment.$current before using the property
                """)
        }
        state.settings = environment
        return environment
    }

    /// Subscribes the owner to this key only: through its publisher if it is a `SettingsOwner`,
    /// through Observation if it is `Observable`, or both.
    private func prepare<Owner: AnyObject, Value>(
        _ state: inout State, settings: Settings, owner: Owner, keyPath: KeyPath<Owner, Value>
    ) {
        state.isPrepared = true
        if let owner = owner as? any SettingsOwner {
            owner.objectWillChange.watch(name, in: settings)
        }
        if let observable = owner as? any Observable & AnyObject,
            let observed = Self.observedProperty(observable, keyPath: keyPath)
        {
            state.observed = observed
            state.observationToken = settings.observe(keys: [name]) { _ in observed.announceMutation() }
        }
    }

    private static func observedProperty<Owner: Observable & AnyObject, Root, Value>(
        _ owner: Owner, keyPath: KeyPath<Root, Value>
    ) -> (any ObservationAccess)? {
        guard let keyPath = keyPath as? KeyPath<Owner, Value> else { return nil }
        return ObservedProperty(owner: owner, keyPath: keyPath)
    }
}

/// Reports reads and mutations of one property to Observation.
private protocol ObservationAccess: Sendable {
    func recordAccess()
    func announceMutation()
}

/// One `@Setting` property of an `Observable` owner, with the registrar its reads and changes go
/// through.
///
/// Unchecked: the owner is held weakly and only handed to the thread-safe registrar as the
/// subject of an access or mutation; the key path and registrar are immutable.
private final class ObservedProperty<Owner: Observable & AnyObject, Value>: ObservationAccess,
    @unchecked Sendable
{
    private weak var owner: Owner?
    private let keyPath: KeyPath<Owner, Value>
    private let registrar = ObservationRegistrar()

    init(owner: Owner, keyPath: KeyPath<Owner, Value>) {
        self.owner = owner
        self.keyPath = keyPath
    }

    func recordAccess() {
        guard let owner else { return }
        registrar.access(owner, keyPath: keyPath)
    }

    func announceMutation() {
        guard let owner else { return }
        registrar.willSet(owner, keyPath: keyPath)
        registrar.didSet(owner, keyPath: keyPath)
    }
}
