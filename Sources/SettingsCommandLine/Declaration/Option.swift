import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// An option that takes a value, declared once with the type it yields and the values it accepts:
/// commands read `arguments.value(Options.maxFrame)`, so a misspelt option does not compile and
/// a value out of range is refused with the same sentence everywhere.
struct Option<Value: Sendable>: Sendable {
    /// What parsing, help, completions and the man page read.
    let spec: OptionSpec
    /// What a valid value looks like, for the error: "a number of seconds (0: never)".
    let expectation: String
    /// The value, or nil when `text` is not one.
    let convert: @Sendable (String) -> Value?
    /// Whether any text is a value (so reading it cannot fail).
    var isFreeText = false

    /// Reads `text` as this option's value, or says why it is not one.
    func parse(_ text: String, command: String) throws(UsageError) -> Value {
        guard let value = convert(text) else {
            throw UsageError("\(spec.name) needs \(expectation), not '\(text)'", command: command)
        }
        return value
    }
}

/// An option that takes no value.
struct Flag: Sendable {
    /// What parsing, help, completions and the man page read.
    let spec: OptionSpec

    /// A flag called `name`.
    init(_ name: String, _ help: String, conflicts: [String] = []) {
        spec = OptionSpec(name: name, value: nil, help: help, conflicts: conflicts)
    }
}

extension Option where Value == String {
    /// Any non-empty text.
    init(
        _ name: String, _ placeholder: String, _ help: String, repeatable: Bool = false,
        conflicts: [String] = [],
        completion: Completion = .none
    ) {
        spec = OptionSpec(
            name: name, value: placeholder, help: help, isRepeatable: repeatable, conflicts: conflicts,
            completion: completion)
        expectation = "a value"
        convert = { $0 }
        isFreeText = true
    }
}

extension Option {
    /// A value read by `convert`, described by `expectation` when it fails.
    init(
        _ name: String, _ placeholder: String, _ help: String, expecting expectation: String,
        repeatable: Bool = false, conflicts: [String] = [], completion: Completion = .none,
        convert: @escaping @Sendable (String) -> Value?
    ) {
        spec = OptionSpec(
            name: name, value: placeholder, help: help, isRepeatable: repeatable, conflicts: conflicts,
            completion: completion)
        self.expectation = expectation
        self.convert = convert
    }
}

extension Option where Value == Int {
    /// A whole number in `range`.
    static func integer(
        _ name: String, _ placeholder: String, _ help: String, in range: ClosedRange<Int>, expecting: String,
        repeatable: Bool = false
    ) -> Option {
        Option(name, placeholder, help, expecting: expecting, repeatable: repeatable) { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }
}

extension Option where Value == Double {
    /// A finite number in `range`.
    static func number(
        _ name: String, _ placeholder: String, _ help: String, in range: ClosedRange<Double>,
        expecting: String
    ) -> Option {
        Option(name, placeholder, help, expecting: expecting) { text in
            Double(text).flatMap { $0.isFinite && range.contains($0) ? $0 : nil }
        }
    }
}

extension Option where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// One of `Value`'s cases, by raw value; completions offer them all.
    static func choice(_ name: String, _ placeholder: String, _ help: String, conflicts: [String] = [])
        -> Option
    {
        let names = Value.allCases.map(\.rawValue)
        let list =
            names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
        return Option(
            name, placeholder, help, expecting: list, conflicts: conflicts, completion: .choices(names),
            convert: Value.init(rawValue:))
    }
}

/// An option or a flag, as a command lists it.
protocol OptionDeclaration: Sendable {
    /// What parsing, help, completions and the man page read.
    var spec: OptionSpec { get }
}

extension Option: OptionDeclaration {}
extension Flag: OptionDeclaration {}
