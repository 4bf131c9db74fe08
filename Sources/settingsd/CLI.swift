import SettingsStore

/// Parses the command line, runs the command, and returns the exit status:
/// 0 on success, 1 on failure, 64 on bad usage.
enum CLI {
    static func run(_ arguments: [String]) -> Int32 {
        do {
            return try dispatch(arguments)
        } catch let error as UsageError {
            Output.error(error.message)
            let hint = error.command.map { "settingsd help \($0)" } ?? "settingsd help"
            Output.standardError("See '\(hint)'.\n")
            return 64
        } catch let error as SettingsError {
            Output.error(error.description)
            return 1
        } catch {
            Output.error("\(error)")
            return 1
        }
    }

    private static func dispatch(_ arguments: [String]) throws -> Int32 {
        guard let command = arguments.first else {
            Output.standardError(CommandSpec.generalHelp)
            return 64
        }
        switch command {
        case "-h", "--help":
            Output.line(CommandSpec.generalHelp)
            return 0
        case "--version", "version":
            Output.line(
                "settingsd \(SettingsdVersion.current) (protocol \(SettingsdVersion.protocolVersion))")
            return 0
        default:
            guard let spec = CommandSpec.named(command) else {
                throw UsageError("unknown command '\(command)'")
            }
            let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: spec)
            if parsed.wantsHelp {
                Output.line(spec.help)
                return 0
            }
            return try spec.run(parsed)
        }
    }

    /// `settingsd help [COMMAND]`.
    static func help(_ arguments: ParsedArguments) throws -> Int32 {
        guard let name = try arguments.positionals(0...1).first else {
            Output.line(CommandSpec.generalHelp)
            return 0
        }
        guard let spec = CommandSpec.named(name) else { throw UsageError("unknown command '\(name)'") }
        Output.line(spec.help)
        return 0
    }
}
