import SettingsStore

/// What the bridge does with one dconf key, from its state in dconf, in the store, and the state
/// both last agreed on: a three-way comparison, as a file synchroniser makes.
enum BridgeDecision: Equatable {
    /// Both sides agree: record the state as agreed.
    case agree
    /// dconf changed (the user, an app): take its state into the store as a local change.
    case takeFromDconf
    /// The store changed (a peer, the hub, the command line, a revert, an import): write it to dconf.
    case writeToDconf

    /// Decides from canonical states (`canonical`; nil: absent). `base` is nil when the key was
    /// never bridged; then a state the store holds (a value or a deletion) wins, so a machine
    /// joining the fleet adopts what the fleet decided and only adds what the fleet never had.
    static func decide(dconf: String?, store: String?, storeHoldsEntry: Bool, base: String??)
        -> BridgeDecision
    {
        if dconf == store { return .agree }
        guard let base else { return storeHoldsEntry ? .writeToDconf : .takeFromDconf }
        // Both changed since they last agreed: the user's change on this machine is the newer.
        if dconf != base { return .takeFromDconf }
        return .writeToDconf
    }

    /// The form values are compared and recorded in: the type and GLib's unannotated text.
    static func canonical(_ value: GVariant?) -> String? {
        value.map { "\($0.type) \($0.text(annotated: false))" }
    }
}
