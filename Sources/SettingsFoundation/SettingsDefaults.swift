public import Foundation
import SettingsDaemonClient
public import SettingsStore
import SettingsSync

/// `UserDefaults` backed by a settingsd store: code written for Apple platforms keeps calling
/// `UserDefaults` methods, and gets durable writes, other processes, replicas and administrators.
///
/// A suite is the key prefix `suite.<name>/` of one store; the standard defaults are the prefix
/// `app.<process name>/` (a `/` or `%` in the name written `%2F`, `%25`), so no suite's keys
/// lie inside another's: `group.com.example` and `group.com.example.shared` are apart. `SettingsDefaults.standard` and `SettingsDefaults(suiteName:)` use the
/// process's shared store (`SharedStores`): a file of the app's own, synced with the daemon when
/// one runs, so the CLI and other apps see the writes and this app is told of theirs.
///
/// ```swift
/// let defaults: UserDefaults = SettingsDefaults.standard
/// defaults.set(0.7, forKey: "volume")                 // durable when it returns
/// defaults.double(forKey: "volume")                   // 0.7, Foundation's coercions included
/// NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: nil) { _ in … }
/// ```
///
/// What differs from Foundation is in docs/APPLE.md: notifications for every change, not only
/// this process's; a `Float` is kept as the `Double` it widens to; `register(defaults:)` applies
/// to this object, not every `UserDefaults` of the process.
// Thread-safe as UserDefaults is: its state is the store's, and `registered`, only touched under `lock`.
open class SettingsDefaults: UserDefaults {
    /// The store that holds the values.
    public let settings: Settings
    /// The key prefix of this suite in the store (`suite.name/`, or `app.name/` for the standard one).
    public let prefix: String
    private let lock = NSLock()
    private var registered: [String: Any] = [:]
    private var observation: SubscriptionToken?

    /// The prefix of a suite's keys: `suite.<name>/`, or `app.<process name>/` for nil. The name
    /// ends at the `/`, which it cannot hold itself, so one suite's prefix is never a prefix of
    /// another's.
    public static func prefix(forSuite name: String?) -> String {
        name.map { "suite.\(escaped($0))/" } ?? "app.\(escaped(ProcessInfo.processInfo.processName))/"
    }

    /// `name` with `%` and `/` written `%25` and `%2F`.
    private static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
    }

    /// The standard defaults of the process, in its shared store.
    override open class var standard: UserDefaults {
        SharedStores.standardDefaults
    }

    /// The suite `suiteName` (nil: the standard one) in the process's shared store; nil when the
    /// store cannot be opened (the reason goes to standard error).
    public override convenience init?(suiteName: String?) {
        guard let settings = SharedStores.defaults else { return nil }
        self.init(settings: settings, suiteName: suiteName)
    }

    /// The suite `suiteName` (nil: the standard one) in `settings`.
    public init?(settings: Settings, suiteName: String?) {
        self.settings = settings
        prefix = Self.prefix(forSuite: suiteName)
        super.init(suiteName: suiteName)
        let target = WeakDefaults(self)
        observation = settings.observe(.prefixes([prefix])) { change in target.defaults?.post(change) }
    }

    deinit {
        observation?.cancel()
    }

    private func post(_ change: SettingsChange) {
        NotificationCenter.default.post(
            name: UserDefaults.didChangeNotification, object: self,
            userInfo: [
                Self.changedKeysKey: change.keys.map { String($0.dropFirst(prefix.count)) },
                Self.changeReasonKey: change.reason.rawValue,
            ])
    }

    /// The `userInfo` key of a change notification's changed keys (`[String]`, without the prefix).
    public static let changedKeysKey = "SettingsChangedKeys"
    /// The `userInfo` key of a change notification's reason (`ChangeReason`'s raw value:
    /// `local`, `replica`, `system`, …).
    public static let changeReasonKey = "SettingsChangeReason"

    // MARK: Values

    /// The value of `defaultName` as a property-list object: the stored value, else a registered
    /// default; nil when neither.
    open override func object(forKey defaultName: String) -> Any? {
        if let argument = volatileDomain(forName: UserDefaults.argumentDomain)[defaultName] {
            return argument
        }
        if let value = settings.value(forKey: prefix + defaultName) { return PropertyList.object(value) }
        return lock.withLock { registered[defaultName] }
    }

    /// Stores `value` (a property-list object; nil removes the key) durably, and posts
    /// `didChangeNotification`.
    open override func set(_ value: Any?, forKey defaultName: String) {
        guard let value else {
            removeObject(forKey: defaultName)
            return
        }
        do throws(SettingsError) {
            try settings.set(try PropertyList.settingValue(value), forKey: prefix + defaultName)
        } catch {
            report(error, key: defaultName)
        }
    }

    /// Removes the stored value of `defaultName`, so reads return its registered default again.
    open override func removeObject(forKey defaultName: String) {
        do throws(SettingsError) {
            try settings.removeValue(forKey: prefix + defaultName)
        } catch {
            report(error, key: defaultName)
        }
    }

    /// Foundation stops the process on a value it cannot store; settingsd says why and keeps going.
    private func report(_ error: SettingsError, key: String) {
        FileHandle.standardError.write(
            Data("SettingsDefaults: '\(key)' was not written: \(error.message)\n".utf8))
    }

    /// Registers values read while a key holds none: never stored, never synced.
    open override func register(defaults registrationDictionary: [String: Any]) {
        var converted: [String: Any] = [:]
        for (key, value) in registrationDictionary {
            // As Foundation does: a URL is registered as its path, read back by `url(forKey:)`.
            if let url = value as? URL {
                converted[key] = url.absoluteURL.path
            } else if let url = value as? NSURL {
                converted[key] = url.absoluteURL?.path ?? ""
            } else {
                converted[key] = (try? PropertyList.settingValue(value)).map(PropertyList.object) ?? value
            }
        }
        lock.withLock { registered.merge(converted) { $1 } }
    }

    /// Every value of the suite, registered defaults under the stored ones.
    open override func dictionaryRepresentation() -> [String: Any] {
        var values = lock.withLock { registered }
        for (key, value) in storedValues(prefix: prefix) { values[key] = value }
        return values
    }

    /// The values stored under `prefix`, by their names after it.
    func storedValues(prefix: String) -> [String: Any] {
        var values: [String: Any] = [:]
        for key in settings.keys(withPrefix: prefix) {
            if let value = settings.value(forKey: key) {
                values[String(key.dropFirst(prefix.count))] = PropertyList.object(value)
            }
        }
        return values
    }

    /// Always true: every write is durable once it returns.
    @discardableResult
    open override func synchronize() -> Bool { true }

    /// Whether an administrator locked the key (`/etc/settingsd/locks.d`) or the organisation's
    /// hub made it mandatory: reads return that value and writes are refused. Show it as "set by
    /// your organisation".
    open override func objectIsForced(forKey key: String) -> Bool {
        settings.lockingFile(forKey: prefix + key) != nil
    }

    /// Whether the key in the suite `domain` is locked or mandatory.
    open override func objectIsForced(forKey key: String, inDomain domain: String) -> Bool {
        settings.lockingFile(forKey: Self.prefix(forSuite: domain) + key) != nil
    }

    // MARK: Persistent domains: other suites of the same store, read and replaced whole

    /// The values stored in the suite `domainName`, registered defaults left out.
    open override func persistentDomain(forName domainName: String) -> [String: Any]? {
        storedValues(prefix: Self.prefix(forSuite: domainName))
    }

    /// Replaces the suite `domainName` with `domain`, in one transaction, and posts
    /// `didChangeNotification` for this object, as Foundation does.
    open override func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        let prefix = Self.prefix(forSuite: domainName)
        do {
            var values: [String: SettingValue] = [:]
            for (key, value) in domain { values[prefix + key] = try PropertyList.settingValue(value) }
            try settings.transaction { transaction in
                try transaction.importValues(values, replacingExisting: true, under: [prefix])
            }
        } catch {
            FileHandle.standardError.write(
                Data("SettingsDefaults: domain '\(domainName)' was not written: \(error)\n".utf8))
        }
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }

    /// Removes every value of the suite `domainName` and posts `didChangeNotification`.
    open override func removePersistentDomain(forName domainName: String) {
        setPersistentDomain([:], forName: domainName)
    }
}

/// The defaults a store observer posts for, held weakly.
private struct WeakDefaults: @unchecked Sendable {  // only read, to post from any thread
    weak var defaults: SettingsDefaults?
    init(_ defaults: SettingsDefaults) { self.defaults = defaults }
}
