import SettingsStore

/// Parses the command line, runs the command, and returns the exit status:
/// 0 on success, 1 on failure, 64 on bad usage.
enum CLI {
    static let connectionOptions: Set<String> = ["--socket", "--db"]

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
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help":
            Output.line(CommandSpec.generalHelp)
            return 0
        case "--version", "version":
            Output.line(
                "settingsd \(SettingsdVersion.current) (protocol \(SettingsdVersion.protocolVersion))")
            return 0
        case "help":
            guard let name = rest.first else {
                Output.line(CommandSpec.generalHelp)
                return 0
            }
            guard let spec = CommandSpec.named(name) else { throw UsageError("unknown command '\(name)'") }
            Output.line(spec.help)
            return 0
        default:
            guard let spec = CommandSpec.named(command) else {
                throw UsageError("unknown command '\(command)'")
            }
            if rest.contains("-h") || rest.contains("--help") {
                Output.line(spec.help)
                return 0
            }
            return try runCommand(command, rest)
        }
    }

    private static func runCommand(_ command: String, _ arguments: [String]) throws -> Int32 {
        switch command {
        case "run":
            let parsed = try ParsedArguments(
                arguments,
                options: [
                    "--db", "--socket", "--durability", "--log-level", "--allow-uid", "--max-frame", "--peer",
                ],
                flags: [], command: command)
            return try RunCommand(parsed).run()
        case "get":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: ["--json"], command: command)
            return try ClientCommands.get(parsed)
        case "set":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions.union(["--type"]), flags: ["--json"], command: command)
            return try ClientCommands.set(parsed)
        case "delete":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: [], command: command)
            return try ClientCommands.delete(parsed)
        case "list":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: ["--json"], command: command)
            return try ClientCommands.list(parsed)
        case "watch":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: ["--json"], command: command)
            return try ClientCommands.watch(parsed)
        case "export":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: [], command: command)
            return try ClientCommands.export(parsed)
        case "import":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: ["--replace"], command: command)
            return try ClientCommands.importDocument(parsed)
        case "sync":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions.union(["--timeout"]), flags: ["--wait"],
                command: command)
            return try ClientCommands.sync(parsed)
        case "status":
            let parsed = try ParsedArguments(
                arguments, options: connectionOptions, flags: ["--json"], command: command)
            return try ClientCommands.status(parsed)
        default:
            throw UsageError("unknown command '\(command)'")
        }
    }
}
