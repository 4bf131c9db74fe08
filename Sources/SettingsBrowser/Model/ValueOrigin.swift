/// Where a key's effective value comes from, as the browser marks it in the tree.
package enum ValueOrigin: Sendable, Equatable {
    /// The user's own value (written here or synced).
    case user
    /// The default of a schema or of the app.
    case schemaDefault
    /// A system default from `defaults.d`.
    case systemDefault
    /// A value the hub's policy recommends.
    case recommendedPolicy
    /// A value the hub's policy makes mandatory.
    case mandatoryPolicy
    /// A `locks.d` lock.
    case locked
    /// No value at all.
    case unset

    /// The origin a `describe` or `schema` source phrase names (`Settings.ValueSource`'s words).
    package init(source: String) {
        self =
            if source.hasPrefix("locked") {
                .locked
            } else if source.hasPrefix("mandatory") {
                .mandatoryPolicy
            } else if source.hasPrefix("recommended") {
                .recommendedPolicy
            } else if source.hasPrefix("system default") {
                .systemDefault
            } else if source.hasPrefix("the user") {
                .user
            } else if source == "unset" {
                .unset
            } else {
                .schemaDefault
            }
    }

    /// The one-character mark the tree shows before the key's name.
    package var mark: Character {
        switch self {
        case .user: "*"
        case .schemaDefault, .unset: " "
        case .systemDefault: "s"
        case .recommendedPolicy: "r"
        case .mandatoryPolicy: "P"
        case .locked: "L"
        }
    }

    /// Whether the key cannot be written (a lock or a mandatory policy holds it).
    package var isHeld: Bool {
        self == .locked || self == .mandatoryPolicy
    }
}
