import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Parses the command line, runs the command, and returns the exit status:
/// 0 on success, 1 on failure, 64 on bad usage.
package enum CLI {
    /// Runs the process's command line as `binary` and exits with the command's status.
    package static func main(as binary: CommandLineBinary) -> Never {
        // A parent may hand down a mask blocking nearly every signal (Foundation's `Process`
        // started from a thread pool does): start from none blocked, as a shell does, so that
        // SIGTERM and SIGINT stop a command such as `watch`. The daemon blocks its own again.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        if binary == .daemon {
            do throws(SettingsError) {
                try CommandLineBinary.checkStartedBySameVersion()
            } catch {
                Output.error(error.message)
                exit(1)
            }
        }
        exit(arguments().map { run($0, as: binary) } ?? 64)
    }

    /// The arguments as given, refusing any that is not valid UTF-8 rather than altering it.
    private static func arguments() -> [String]? {
        var result: [String] = []
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let pointer = CommandLine.unsafeArgv[index], let text = String(validatingCString: pointer)
            else {
                Output.error(
                    "argument \(index) is not valid UTF-8; settingsd takes keys and values as UTF-8 text")
                return nil
            }
            result.append(text)
        }
        return result
    }

    static func run(_ arguments: [String], as binary: CommandLineBinary) -> Int32 {
        do {
            return try dispatch(arguments, as: binary)
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

    private static func dispatch(_ arguments: [String], as binary: CommandLineBinary) throws -> Int32 {
        guard let command = arguments.first else {
            Output.standardError(CommandSpec.generalHelp)
            return 64
        }
        switch command {
        case "-h", "--help":
            Output.line(CommandSpec.generalHelp)
            return 0
        case "__complete":
            // Hidden: what the completion scripts ask (see `ShellCompletions`).
            return ShellCompletions.complete(Array(arguments.dropFirst()))
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
            if spec.runsInDaemonBinary, binary == .client {
                // The daemon lives long: a password in its arguments would show all that time.
                let handed = spec.name == "run" ? HubCredentials.hidingPassword(in: arguments) : arguments
                try CommandLineBinary.continueInDaemon(handed)
            }
            if spec.name == "run", binary == .daemon, let hub = parsed.value(RunOptions.hub),
                HubCredentials.hasPassword(hub)
            {
                HubCredentials.warn()
            }
            return try spec.run(parsed)
        }
    }

    /// `settingsd help [COMMAND]`, `settingsd help --man`.
    static func help(_ arguments: ParsedArguments) throws -> Int32 {
        let name = try arguments.positionals(0...1).first
        if arguments.isSet(Options.man) {
            guard name == nil else {
                throw UsageError("--man prints the whole manual: no COMMAND", command: "help")
            }
            Output.line(ManPage.roff)
            return 0
        }
        guard let name else {
            Output.line(CommandSpec.generalHelp)
            return 0
        }
        guard let spec = CommandSpec.named(name) else { throw UsageError("unknown command '\(name)'") }
        Output.line(spec.help)
        return 0
    }
}
