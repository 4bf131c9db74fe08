/// Command-line arguments split into positionals, options with values and flags.
///
/// Accepts `--name value`, `--name=value`, repeated options, and `--` to end options.
struct ParsedArguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], options: Set<String>, flags allowedFlags: Set<String>, command: String)
        throws(UsageError)
    {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0] == "-h" ? "--help" : parts[0]
            if options.contains(name) {
                if parts.count == 2 {
                    values[name, default: []].append(parts[1])
                } else {
                    guard index < arguments.count else {
                        throw UsageError("\(name) needs a value", command: command)
                    }
                    values[name, default: []].append(arguments[index])
                    index += 1
                }
            } else if allowedFlags.contains(name) || name == "--help" {
                guard parts.count == 1 else { throw UsageError("\(name) takes no value", command: command) }
                flags.insert(name)
            } else {
                throw UsageError("unknown option '\(argument)'", command: command)
            }
        }
    }

    /// The last value given for `name`.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for `name`, in order.
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether the flag was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Exactly `range` positionals, or a usage error naming what is wrong.
    func positionals(_ range: ClosedRange<Int>, command: String) throws(UsageError) -> [String] {
        guard range.contains(positionals.count) else {
            let expected =
                range.lowerBound == range.upperBound
                ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
            throw UsageError("expected \(expected) argument(s), got \(positionals.count)", command: command)
        }
        return positionals
    }
}
