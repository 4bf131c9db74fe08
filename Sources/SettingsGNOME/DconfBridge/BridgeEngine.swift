import SettingsStore

/// A bridge's comparisons, on its side's thread: what changed on which side, and one store
/// transaction and one change of the side (a dconf change set, a keyfile written) for each batch
/// of keys. The dconf bridge and the Flatpak keyfile bridge both compare through it.
final class BridgeEngine: @unchecked Sendable {  // made before the side's thread, then used on it only
    typealias StatusUpdate = @Sendable ((inout DconfBridgeStatus) -> Void) -> Void

    private let settings: Settings
    private let dirs: [String]
    private let keys: BridgeKeys
    private let states: BridgedStates
    /// The actor the store's history names for the side's changes (`dconf`, a Flatpak app).
    private let actor: ChangeActor
    private let logger: SettingsLogger?
    private let updateStatus: StatusUpdate
    /// The tags of the bridge's own dconf writes whose notification has not come back yet.
    private var ownTags: [String] = []
    private var lockedPaths: Set<String> = []

    init(
        settings: Settings, dirs: [String], keys: BridgeKeys = BridgeKeys(prefix: ""),
        actor: ChangeActor = .dconf,
        states: BridgedStates, logger: SettingsLogger?, status: @escaping StatusUpdate
    ) {
        self.settings = settings
        self.dirs = dirs
        self.keys = keys
        self.actor = actor
        self.states = states
        self.logger = logger
        updateStatus = status
    }

    /// The dconf key for a store key, when the key has one that maps back to it.
    static func path(forKey key: String) -> String? {
        BridgeKeys(prefix: "").path(forKey: key)
    }

    private func isBridged(_ path: String) -> Bool {
        dirs.contains { path.hasPrefix($0) }
    }

    /// Compares every key under the dirs: the side's user values, the store's keys and those
    /// bridged before.
    func compareAll(client: some BridgeSide) {
        let policy = settings.policy
        var paths = Set<String>()
        for dir in dirs {
            paths.formUnion(client.userKeys(under: dir))
            paths.formUnion(states.paths(under: dir))
            for prefix in keys.prefixes(forDir: dir) {
                paths.formUnion(settings.keys(withPrefix: prefix).compactMap(keys.path(forKey:)))
                // Keys an administrator locked, or a hub policy made mandatory, hold dconf at that
                // value, stored or not.
                let held = policy.locks.map(\.key) + policy.fleet.settings.keys
                paths.formUnion(
                    held.filter { $0.hasPrefix(prefix) && !$0.hasSuffix(".") }.compactMap(keys.path(forKey:)))
            }
        }
        // What differs now was changed while the bridge was not watching: at the latest when
        // dconf last wrote its database.
        let now = settings.configuration.clock()
        let madeBy = client.lastModified(notAfter: now).map {
            HybridTimestamp(milliseconds: $0, counter: 0)
        }
        compare(paths.sorted(), client: client, changedBy: madeBy)
    }

    /// A dconf change notification: ignored when it is the bridge's own write, else the keys it
    /// names (a dir stands for every key under it) are compared.
    func dconfChanged(_ paths: [String], tag: String?, client: some BridgeSide) {
        if let tag, let index = ownTags.firstIndex(of: tag) {
            ownTags.remove(at: index)
            return
        }
        var keys = Set<String>()
        for path in paths {
            guard path.hasSuffix("/") else {
                keys.insert(path)
                continue
            }
            // A dir reset or written as a whole: scan where it meets the bridged dirs.
            for dir in dirs {
                let scanned = dir.hasPrefix(path) ? dir : path.hasPrefix(dir) ? path : nil
                guard let scanned else { continue }
                keys.formUnion(client.userKeys(under: scanned))
                keys.formUnion(states.paths(under: scanned))
            }
        }
        compare(keys.sorted(), client: client)
    }

    /// Compares `paths` three ways and carries what changed to the other side.
    ///
    /// `changedBy` is the latest time a change found in dconf can have been made, when the bridge
    /// was not watching (nil: just now, as a notification says). Such a change is stamped then:
    /// a write made elsewhere since, which the store holds or receives later, wins over it, as
    /// it would have had the bridge been running.
    func compare(_ paths: [String], client: some BridgeSide, changedBy: HybridTimestamp? = nil) {
        let policy = settings.policy
        let schema = policy.schema
        var fromDconf: [(key: String, path: String, value: SettingValue?, state: String?)] = []
        var toDconf: [(path: String, value: GVariant?, state: String?)] = []
        var agreed: [String: String?] = [:]
        var locked = lockedPaths
        for path in paths where isBridged(path) {
            guard let key = keys.key(forPath: path) else { continue }
            let type = schema.rule(forKey: key)?.gvariantType
            func variant(_ value: SettingValue) throws(SettingsError) -> GVariant {
                if let type { try GVariant(value, type: type) } else { try GVariant(untyped: value) }
            }
            let entry = settings.entry(forKey: key)
            let dconfValue: GVariant?
            let storeValue: GVariant?
            let enforced: GVariant??
            do throws(SettingsError) {
                dconfValue = try client.userValue(at: path, type: type)
                storeValue = try entry?.value.map { value throws(SettingsError) in try variant(value) }
                // An administrator's lock (locks.d) holds dconf at the system default, else at the
                // schema's own default (no user value), whatever the user writes there; a
                // mandatory hub policy holds it at the policy's value.
                if policy.lock(forKey: key) != nil {
                    enforced = .some(
                        try policy.systemDefaults[key].map { value throws(SettingsError) in
                            try variant(value.value)
                        })
                } else if let mandatory = policy.fleet.mandatory(forKey: key) {
                    enforced = .some(try variant(mandatory.value))
                } else {
                    enforced = nil
                }
            } catch {
                report("\(path): \(error.message)")
                continue
            }
            let dconfState = BridgeDecision.canonical(dconfValue)
            if let enforced {
                let enforcedState = BridgeDecision.canonical(enforced)
                if dconfState == enforcedState {
                    agreed[path] = enforcedState
                } else if client.isWritable(path) {
                    toDconf.append((path, enforced, enforcedState))
                } else {
                    locked.insert(path)
                }
                continue
            }
            let storeState = BridgeDecision.canonical(storeValue)
            let base = states.state(of: path)
            var decision = BridgeDecision.decide(
                dconf: dconfState, store: storeState, storeHoldsEntry: entry != nil, base: base)
            if decision == .takeFromDconf, let changedBy, let entry, let base, storeState != base,
                entry.version.timestamp > changedBy
            {
                // Both changed while the bridge was away, and the store's change came later.
                decision = .writeToDconf
            }
            switch decision {
            case .agree:
                agreed[path] = dconfState
            case .takeFromDconf:
                do throws(SettingsError) {
                    let value = try dconfValue.map { value throws(SettingsError) in
                        value.type == type ? try value.settingValue() : try value.untypedSettingValue()
                    }
                    fromDconf.append((key, path, value, dconfState))
                } catch {
                    report("\(path): dconf's value cannot be kept: \(error.message)")
                }
            case .writeToDconf:
                guard client.isWritable(path) else {
                    locked.insert(path)
                    continue
                }
                locked.remove(path)
                toDconf.append((path, storeValue, storeState))
            }
        }
        var recorded = agreed
        for change in take(fromDconf, madeBy: changedBy) { recorded[change.path] = change.state }
        if !toDconf.isEmpty {
            do throws(SettingsError) {
                if let tag = try client.change(toDconf.map { ($0.path, $0.value) }) {
                    ownTags.append(tag)
                    if ownTags.count > 1_000 { ownTags.removeFirst(ownTags.count - 1_000) }
                }
                for change in toDconf { recorded[change.path] = change.state }
                let count = toDconf.count
                updateStatus { status in
                    status.keysToDconf += count
                    status.changeSets += 1
                }
            } catch {
                report(error.message)
            }
        }
        do throws(SettingsError) {
            try states.record(recorded)
        } catch {
            report("the bridge's state file: \(error.message)")
        }
        if locked != lockedPaths {
            lockedPaths = locked
            let sorted = locked.sorted()
            updateStatus { $0.lockedPaths = sorted }
        }
    }

    /// Commits dconf's changes to the store in one transaction, or key by key when one of them
    /// is refused (a lock, a schema), stamped at `madeBy` when given; returns those committed.
    private func take(
        _ changes: [(key: String, path: String, value: SettingValue?, state: String?)],
        madeBy: HybridTimestamp?
    ) -> [(key: String, path: String, value: SettingValue?, state: String?)] {
        guard !changes.isEmpty else { return [] }
        func commit(_ batch: ArraySlice<(key: String, path: String, value: SettingValue?, state: String?)>)
            throws
        {
            try settings.transaction(reason: .local, madeBy: madeBy) { transaction in
                // dconf's change, not the daemon's: the history says so.
                transaction.actor = actor
                for change in batch {
                    if let value = change.value {
                        try transaction.set(value, forKey: change.key)
                    } else {
                        try transaction.removeValue(forKey: change.key)
                    }
                }
            }
        }
        var taken = changes
        do {
            try commit(changes[...])
        } catch {
            taken = changes.filter { change in
                do {
                    try commit([change][...])
                    return true
                } catch {
                    report("\(change.path) is not taken into the store: \(error)")
                    return false
                }
            }
        }
        let count = taken.count
        if count > 0 { updateStatus { $0.keysFromDconf += count } }
        return taken
    }

    private func report(_ problem: String) {
        logger?.log(.warning, "dconf bridge: \(problem)")
        updateStatus { $0.lastError = problem }
    }
}
