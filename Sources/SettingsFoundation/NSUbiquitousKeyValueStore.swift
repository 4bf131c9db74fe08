public import Foundation
import SettingsDaemonClient
public import SettingsStore
import SettingsSync

// swift-format-ignore: AlwaysUseLowerCamelCase
/// The key in a `didChangeExternallyNotification`'s `userInfo` whose value (an `Int`) says why
/// the keys changed: `NSUbiquitousKeyValueStoreServerChange` and the others.
public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The key in a `didChangeExternallyNotification`'s `userInfo` whose value (`[String]`) names the
/// keys that changed.
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
// swift-format-ignore: AlwaysUseLowerCamelCase
/// Another device (a replica, the hub) changed the keys.
public let NSUbiquitousKeyValueStoreServerChange = 0
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The first sync with a peer or the hub brought the keys.
public let NSUbiquitousKeyValueStoreInitialSyncChange = 1
// swift-format-ignore: AlwaysUseLowerCamelCase
/// A change from elsewhere was refused: it would break the store's limits (1 MB, 1,024 keys).
public let NSUbiquitousKeyValueStoreQuotaViolationChange = 2
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The account changed. Declared for Apple's code; settingsd does not post it yet (a hub
/// namespace switch is not yet seen as an account change).
public let NSUbiquitousKeyValueStoreAccountChange = 3

/// iCloud's key-value store, as Apple's code expects it, on a settingsd store whose replication
/// goes to peers or a hub: swift-corelibs-foundation has no such class.
///
/// `default` uses a store of the app's own with iCloud's limits (`SharedStores`); give any store
/// with `init(settings:)`. Writes are durable when they return; changes that arrive from
/// elsewhere are announced with `didChangeExternallyNotification`, on the main queue by default.
///
/// ```swift
/// let store = NSUbiquitousKeyValueStore.default
/// store.set("dark", forKey: "theme")
/// NotificationCenter.default.addObserver(
///     forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: .main
/// ) { note in print(note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] ?? []) }
/// ```
open class NSUbiquitousKeyValueStore: NSObject, @unchecked Sendable {  // state: a thread-safe store
    /// Posted when keys change because of another device, an initial sync, a refusal by the
    /// limits or an account change; never for this store's own writes.
    public static let didChangeExternallyNotification = Notification.Name(
        "NSUbiquitousKeyValueStoreDidChangeExternallyNotification")

    /// The store of the app, synced through `$SETTINGSD_UBIQUITOUS_HUB` when set.
    open class var `default`: NSUbiquitousKeyValueStore { shared }
    private static let shared = NSUbiquitousKeyValueStore(settings: SharedStores.ubiquitous)

    /// The store that holds the values.
    public let settings: Settings
    private let queue: OperationQueue?
    private var observation: SubscriptionToken?

    /// A key-value store on `settings`; notifications are posted on `queue` (nil: on the thread
    /// that applied the change). An operation queue, not a dispatch queue: posting from inside
    /// one of its operations lets observers registered with that queue run at once (posting from
    /// a bare `DispatchQueue.main` block would make Foundation wait on the main queue from it).
    public init(settings: Settings, notificationQueue queue: OperationQueue? = .main) {
        self.settings = settings
        self.queue = queue
        super.init()
        observation = settings.observe(.all) { [weak self] change in self?.announce(change) }
    }

    deinit {
        observation?.cancel()
    }

    private func announce(_ change: SettingsChange) {
        let reason: Int
        switch change.reason {
        case .replica: reason = NSUbiquitousKeyValueStoreServerChange
        case .initialSync: reason = NSUbiquitousKeyValueStoreInitialSyncChange
        case .quotaViolation: reason = NSUbiquitousKeyValueStoreQuotaViolationChange
        case .accountChange: reason = NSUbiquitousKeyValueStoreAccountChange
        default: return
        }
        let keys = change.keys
        let post: @Sendable () -> Void = { [self] in
            NotificationCenter.default.post(
                name: Self.didChangeExternallyNotification, object: self,
                userInfo: [
                    NSUbiquitousKeyValueStoreChangeReasonKey: reason,
                    NSUbiquitousKeyValueStoreChangedKeysKey: keys,
                ])
        }
        if let queue { queue.addOperation(post) } else { post() }
    }

    // MARK: Values

    /// The value of `aKey`, as a property-list value, or nil.
    open func object(forKey aKey: String) -> Any? {
        settings.value(forKey: aKey).map(PropertyList.object)
    }

    /// Stores a property-list value (nil removes the key). A value the limits refuse is not
    /// stored; the reason goes to standard error, as Apple's store logs it.
    open func set(_ anObject: Any?, forKey aKey: String) {
        do throws(SettingsError) {
            guard let anObject else { return try settings.removeValue(forKey: aKey) }
            try settings.set(try PropertyList.settingValue(anObject), forKey: aKey)
        } catch {
            FileHandle.standardError.write(
                Data("NSUbiquitousKeyValueStore: '\(aKey)' was not written: \(error.message)\n".utf8))
        }
    }

    /// Removes `aKey`.
    open func removeObject(forKey aKey: String) { set(nil as Any?, forKey: aKey) }

    /// The string at `aKey`, or nil.
    open func string(forKey aKey: String) -> String? {
        settings.value(forKey: aKey).flatMap { if case .string(let value) = $0 { value } else { nil } }
    }
    /// The array at `aKey`, or nil.
    open func array(forKey aKey: String) -> [Any]? { object(forKey: aKey) as? [Any] }
    /// The dictionary at `aKey`, or nil.
    open func dictionary(forKey aKey: String) -> [String: Any]? { object(forKey: aKey) as? [String: Any] }
    /// The data at `aKey`, or nil.
    open func data(forKey aKey: String) -> Data? {
        settings.value(forKey: aKey).flatMap { if case .data(let value) = $0 { value } else { nil } }
    }

    /// The integer at `aKey` (a double truncated, a boolean 0 or 1), else 0.
    open func longLong(forKey aKey: String) -> Int64 {
        switch settings.value(forKey: aKey) {
        case .integer(let value)?: value
        case .double(let value)?: Int64(exactly: value.rounded(.towardZero)) ?? 0
        case .bool(let value)?: value ? 1 : 0
        default: 0
        }
    }

    /// The number at `aKey`, else 0.
    open func double(forKey aKey: String) -> Double {
        switch settings.value(forKey: aKey) {
        case .double(let value)?: value
        case .integer(let value)?: Double(value)
        case .bool(let value)?: value ? 1 : 0
        default: 0
        }
    }

    /// The boolean at `aKey` (a number is true when not 0), else false.
    open func bool(forKey aKey: String) -> Bool {
        switch settings.value(forKey: aKey) {
        case .bool(let value)?: value
        case .integer(let value)?: value != 0
        case .double(let value)?: value != 0
        default: false
        }
    }

    /// Stores a string (nil removes the key).
    open func set(_ aString: String?, forKey aKey: String) { set(aString as Any?, forKey: aKey) }
    /// Stores data (nil removes the key).
    open func set(_ aData: Data?, forKey aKey: String) { set(aData as Any?, forKey: aKey) }
    /// Stores an array (nil removes the key).
    open func set(_ anArray: [Any]?, forKey aKey: String) { set(anArray as Any?, forKey: aKey) }
    /// Stores a dictionary (nil removes the key).
    open func set(_ aDictionary: [String: Any]?, forKey aKey: String) {
        set(aDictionary as Any?, forKey: aKey)
    }
    /// Stores an integer.
    open func set(_ value: Int64, forKey aKey: String) { set(value as Any?, forKey: aKey) }
    /// Stores a number.
    open func set(_ value: Double, forKey aKey: String) { set(value as Any?, forKey: aKey) }
    /// Stores a boolean.
    open func set(_ value: Bool, forKey aKey: String) { set(value as Any?, forKey: aKey) }

    /// Every key and value.
    open var dictionaryRepresentation: [String: Any] { settings.snapshot().mapValues(PropertyList.object) }

    /// True: writes are in memory and on disk when they return (Apple's meaning: nothing is
    /// forced up to the server; replication runs on its own).
    @discardableResult
    open func synchronize() -> Bool { true }
}
