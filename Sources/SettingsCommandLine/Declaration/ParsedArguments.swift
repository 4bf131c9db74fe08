import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

/// Command-line arguments split into positionals, options with values and flags, checked
/// against the command's declaration.
///
/// Accepts `--name value` and `--name=value`, `--` to end options, and `-h`/`--help`. An argument
/// that reads as a negative number (`-5`, `-0.5`, `-inf`) is a value, not an option. A
/// non-repeatable option given twice, or two conflicting options, is a usage error.
struct ParsedArguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    /// Whether `-h` or `--help` came before `--`.
    private(set) var wantsHelp = false
    let command: String
    /// The options the command declares, by name.
    private let declared: Set<String>

    init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        command = spec.name
        declared = Set(spec.options.map(\.name))
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-", !Self.isNumber(argument) else {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                wantsHelp = true
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard let option = spec.options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '\(argument)'", command: command)
            }
            guard option.isRepeatable || (values[name] == nil && !flags.contains(name)) else {
                throw UsageError("\(name) is given more than once", command: command)
            }
            if let conflict = option.conflicts.first(where: { values[$0] != nil || flags.contains($0) }) {
                throw UsageError("\(name) and \(conflict) cannot be used together", command: command)
            }
            guard option.takesValue else {
                guard parts.count == 1 else { throw UsageError("\(name) takes no value", command: command) }
                flags.insert(name)
                continue
            }
            let value: String
            if parts.count == 2 {
                value = String(parts[1])
            } else {
                guard index < arguments.count else {
                    throw UsageError("\(name) needs a value", command: command)
                }
                value = arguments[index]
                index += 1
            }
            // No option means anything when empty (a path, a type, a number): say so now.
            guard !value.isEmpty else {
                throw UsageError("\(name) needs a value, not an empty string", command: command)
            }
            values[name, default: []].append(value)
        }
    }

    /// Whether `argument` reads as a number: `-5`, `-0.5`, `-1e3`, `-inf`, `-nan`.
    private static func isNumber(_ argument: String) -> Bool {
        Double(argument) != nil
    }

    /// The value given for `option` (the last, if it is repeatable), or nil when it was not given.
    ///
    /// - Throws: A usage error naming the option and what it needs when the value is not one.
    func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        try values(option).last
    }

    /// The text given for a free-text `option` (any text is one), or nil when it was not given.
    func value(_ option: Option<String>) -> String? {
        values(option).last
    }

    /// Every text given for a free-text `option`, in order.
    func values(_ option: Option<String>) -> [String] {
        // A text option with its own rule must be read through the throwing accessor.
        precondition(option.isFreeText, "\(option.spec.name) has a rule: read it with `try values(_:)`")
        return given(option.spec)
    }

    /// Every value given for `option`, in order.
    func values<Value>(_ option: Option<Value>) throws(UsageError) -> [Value] {
        var result: [Value] = []
        for text in given(option.spec) { result.append(try option.parse(text, command: command)) }
        return result
    }

    /// Whether `flag` was given.
    func isSet(_ flag: Flag) -> Bool {
        check(flag.spec)
        return flags.contains(flag.spec.name)
    }

    /// The texts given for an option, after checking that the command declares it.
    private func given(_ spec: OptionSpec) -> [String] {
        check(spec)
        return values[spec.name] ?? []
    }

    /// Reading an option the command does not declare is a mistake in settingsd, not in the
    /// command line: it must fail loudly in tests, not read as "not given".
    private func check(_ spec: OptionSpec) {
        precondition(
            declared.contains(spec.name), "'\(command)' reads \(spec.name), which it does not declare")
    }

    /// Exactly `range` positionals, or a usage error naming what is wrong.
    func positionals(_ range: ClosedRange<Int>) throws(UsageError) -> [String] {
        guard range.contains(positionals.count) else {
            let expected =
                range.lowerBound == range.upperBound
                ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw UsageError("expected \(expected) argument(s), got \(positionals.count)", command: command)
        }
        return positionals
    }
}
