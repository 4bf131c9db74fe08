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

    init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        command = spec.name
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

    /// The value given for `name`.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for `name`, in order.
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether the flag was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

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
