import Observation
import Synchronization

/// The per-property state behind one `@Setting`: its store, once resolved, and the subscriptions
/// that make its owner hear about changes, set up the first time the property is used.
@usableFromInline
final class SettingSlot: Sendable {
    private struct Observation {
        var observed: (any ObservationAccess)?
        var token: SubscriptionToken?
    }

    private static let prepared: UInt8 = 1
    private static let observable: UInt8 = 2

    let name: String
    /// The store known when the owner was made; nil when it is bound at first use instead.
    private let boundSettings: Settings?
    private let lateSettings = Mutex<Settings?>(nil)
    /// `prepared` once the owner is subscribed, plus `observable` when reads must be reported to
    /// Observation: after the first use, a read costs an atomic load unless Observation is involved.
    private let flags = Atomic<UInt8>(0)
    private let observation = Mutex(Observation())

    /// Binds to `store`, else to the environment's store now (when the owner is made), else to the
    /// environment's store when the property is first used.
    package init(name: String, store: Settings?) {
        self.name = name
        self.boundSettings = store ?? SettingsEnvironment.resolved
    }

    /// The store the property reads and writes.
    var settings: Settings {
        boundSettings ?? lateSettings.withLock { resolve(&$0) }
    }

    /// Prepares the owner's subscriptions on first use, reports the access to Observation
    /// tracking, and returns the store.
    @usableFromInline
    func use<Owner: AnyObject, Value>(by owner: Owner, through keyPath: KeyPath<Owner, Value>) -> Settings {
        let settings = settings
        var flags = flags.load(ordering: .acquiring)
        if flags & Self.prepared == 0 {
            flags = prepare(settings: settings, owner: owner, keyPath: keyPath)
        }
        if flags & Self.observable != 0 {
            observation.withLock { $0.observed }?.recordAccess()
        }
        return settings
    }

    private func resolve(_ late: inout Settings?) -> Settings {
        if let late { return late }
        guard let environment = SettingsEnvironment.resolved else {
            fatalError(
                """
                @Setting("\(name)") has no store: pass one (@Setting(..., store: settings)) or set \
                SettingsEnvironment.setDefault(_:) or SettingsEnvironment.$current before using the property
                """)
        }
        late = environment
        return environment
    }

    /// Subscribes the owner to this key only: through its publisher if it is a `SettingsOwner`,
    /// through Observation if it is `Observable`, or both. Runs once; returns the flags.
    private func prepare<Owner: AnyObject, Value>(
        settings: Settings, owner: Owner, keyPath: KeyPath<Owner, Value>
    )
        -> UInt8
    {
        observation.withLock { observation in
            let current = flags.load(ordering: .acquiring)
            guard current & Self.prepared == 0 else { return current }
            var flags = Self.prepared
            if let owner = owner as? any SettingsOwner {
                owner.objectWillChange.watch(name, in: settings)
            }
            if let observable = owner as? any Observable & AnyObject,
                let observed = Self.observedProperty(observable, keyPath: keyPath)
            {
                observation.observed = observed
                observation.token = settings.observe(keys: [name]) { _ in observed.announceMutation() }
                flags |= Self.observable
            }
            self.flags.store(flags, ordering: .releasing)
            return flags
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
    @unchecked Sendable  // weak owner, immutable key path, thread-safe registrar
{
    private weak var owner: Owner?
    private let keyPath: KeyPath<Owner, Value>
    private let registrar = ObservationRegistrar()

    package init(owner: Owner, keyPath: KeyPath<Owner, Value>) {
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
