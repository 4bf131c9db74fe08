import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settingsd completions bash|zsh|fish`: scripts that hand every completion to
/// `settingsd __complete INDEX WORDS...`, which answers from the command declarations, so all
/// shells complete alike and a new option needs no script change.
enum ShellCompletions {
    /// The shells a script exists for.
    static let shells = ["bash", "zsh", "fish"]

    /// `settingsd completions SHELL`.
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let shell = try arguments.positionals(1...1)[0]
        guard let script = script(for: shell) else {
            throw UsageError("no completions for '\(shell)': bash, zsh or fish", command: "completions")
        }
        Output.line(script)
        return 0
    }

    /// The hidden `settingsd __complete INDEX WORDS...`: the first line says what to offer
    /// (`words`, `files` or `directories`), the words follow one per line. It never fails loudly:
    /// a shell shows nothing rather than an error in the middle of a line.
    static func complete(_ arguments: [String]) -> Int32 {
        guard let index = arguments.first.flatMap(Int.init), index >= 0 else { return 0 }
        let engine = CompletionEngine(words: Array(arguments.dropFirst()), current: index)
        switch engine.reply {
        case .words(let words): Output.line((["words"] + words).joined(separator: "\n"))
        case .files: Output.line("files")
        case .directories: Output.line("directories")
        case .keys(let prefix, let connection):
            Output.line((["words"] + keys(prefix: prefix, connection: connection)).joined(separator: "\n"))
        }
        return 0
    }

    /// The keys starting with `prefix` that the daemon (or the database) named by `connection`
    /// holds; none when it cannot be asked.
    private static func keys(prefix: String, connection: [String]) -> [String] {
        guard let spec = CommandSpec.named("list"),
            let parsed = try? ParsedArguments(connection, spec: spec),
            let service = try? parsed.service(forWriting: false),
            let listing = try? service.list(prefix: prefix, includeValues: false)
        else { return [] }
        return listing.keys
    }

    /// The script for `shell`, or nil for a shell without one.
    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash
        case "zsh": zsh
        case "fish": fish
        default: nil
        }
    }

    private static let bash = #"""
        # bash completion for settingsd: eval "$(settingsd completions bash)", or save it as
        # ~/.local/share/bash-completion/completions/settingsd
        _settingsd() {
            local reply
            mapfile -t reply < <("${COMP_WORDS[0]}" __complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null)
            local typed="${COMP_WORDS[COMP_CWORD]}"
            case "${reply[0]}" in
                files) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$typed") ;;
                directories) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$typed") ;;
                *) COMPREPLY=("${reply[@]:1}") ;;
            esac
        }
        complete -F _settingsd settingsd
        """#

    private static let zsh = #"""
        #compdef settingsd
        # zsh completion for settingsd: save as _settingsd in a folder of $fpath, or
        # source <(settingsd completions zsh) after compinit
        _settingsd() {
            local -a reply
            reply=("${(@f)$("${words[1]}" __complete $((CURRENT - 1)) "${words[@]}" 2>/dev/null)}")
            case "${reply[1]}" in
                files) _files ;;
                directories) _files -/ ;;
                *) (( ${#reply} > 1 )) && compadd -Q -- "${reply[@]:1}" ;;
            esac
        }
        if [[ "${funcstack[1]}" == _settingsd ]]; then
            _settingsd "$@"
        elif (( $+functions[compdef] )); then
            compdef _settingsd settingsd
        fi
        """#

    private static let fish = #"""
        # fish completion for settingsd: settingsd completions fish > ~/.config/fish/completions/settingsd.fish
        function __settingsd_complete
            set -l tokens (commandline -opc) (commandline -ct)
            set -l reply (command $tokens[1] __complete (math (count $tokens) - 1) $tokens 2>/dev/null)
            switch "$reply[1]"
                case files
                    __fish_complete_path (commandline -ct)
                case directories
                    __fish_complete_directories (commandline -ct)
                case '*'
                    printf '%s\n' $reply[2..-1]
            end
        end
        complete -c settingsd -f -a '(__settingsd_complete)'
        """#
}
