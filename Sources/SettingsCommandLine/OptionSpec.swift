/// One option of a command, declared once: parsing, validation and help all read it.
struct OptionSpec: Sendable {
    /// The long name with its dashes, `--type`.
    let name: String
    /// The placeholder of its value in help (`TYPE`), or nil for a flag that takes none.
    let value: String?
    /// The help text.
    let help: String
    /// Whether it may be given more than once (each value is kept).
    var isRepeatable = false
    /// Options that cannot be given together with this one.
    var conflicts: [String] = []

    /// Whether it takes a value.
    var takesValue: Bool { value != nil }

    /// The left column of its help row.
    var label: String { value.map { "\(name) \($0)" } ?? name }

    /// A flag (no value).
    static func flag(_ name: String, _ help: String, conflicts: [String] = []) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help, conflicts: conflicts)
    }

    /// An option with a value.
    static func option(
        _ name: String, _ value: String, _ help: String, repeatable: Bool = false, conflicts: [String] = []
    ) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, isRepeatable: repeatable, conflicts: conflicts)
    }
}
