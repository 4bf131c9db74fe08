import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// What to offer for the word being completed, from the command declarations alone (and the
/// daemon's key names): the logic every shell's script shares through `settingsd __complete`.
struct CompletionEngine {
    /// What the shell should offer.
    enum Reply: Equatable {
        /// These words (already filtered by what was typed).
        case words([String])
        /// The shell's own file names.
        case files
        /// The shell's own folder names.
        case directories
        /// Key names starting with this text, asked of the daemon or database the words name.
        case keys(prefix: String, connection: [String])
    }

    /// The words of the command line, the program first.
    let words: [String]
    /// The index of the word being completed (it may be one past the last: a new word).
    let current: Int

    /// The word being completed, as typed so far.
    var typed: String { current < words.count ? words[current] : "" }

    /// What to offer.
    var reply: Reply {
        guard current >= 2 else {
            return .words(filtered(Commands.all.map(\.name) + ["--help", "--version"]))
        }
        guard let spec = CommandSpec.named(words[1]) else { return .words([]) }
        let before = Array(words[2..<min(current, words.count)])
        if let previous = before.last, let option = spec.options.first(where: { $0.name == previous }),
            option.takesValue, !Self.isOptionValue(at: before.count - 1, in: before, spec: spec)
        {
            return reply(for: option.completion, spec: spec)
        }
        if typed.hasPrefix("-") {
            return .words(filtered(spec.options.map(\.name) + ["--help"]))
        }
        let index = Self.positionalCount(in: before, spec: spec)
        guard
            let argument = spec.arguments.indices.contains(index)
                ? spec.arguments[index] : spec.arguments.last,
            index < spec.arguments.count || argument.isRepeatable
        else { return .words([]) }
        return reply(for: argument.completion, spec: spec)
    }

    private func reply(for completion: Completion, spec: CommandSpec) -> Reply {
        switch completion {
        case .none: .words([])
        case .file: .files
        case .directory: .directories
        case .choices(let choices): .words(filtered(choices))
        case .commands: .words(filtered(Commands.all.map(\.name)))
        case .keys: .keys(prefix: typed, connection: connection(of: spec))
        }
    }

    private func filtered(_ candidates: [String]) -> [String] {
        candidates.filter { $0.hasPrefix(typed) }
    }

    /// `--socket PATH` and `--db PATH` as given on the line, so keys come from the same place.
    private func connection(of spec: CommandSpec) -> [String] {
        var result: [String] = []
        var index = 2
        while index + 1 < min(current, words.count) {
            if ["--socket", "--db"].contains(words[index]),
                spec.options.contains(where: { $0.name == words[index] })
            {
                result += [words[index], words[index + 1]]
                index += 1
            }
            index += 1
        }
        return result
    }

    /// How many positional arguments stand in `words` (options and their values skipped).
    private static func positionalCount(in words: [String], spec: CommandSpec) -> Int {
        var count = 0
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            if !optionsEnded, word == "--" {
                optionsEnded = true
            } else if !optionsEnded, word.hasPrefix("-"), word != "-", Double(word) == nil {
                if !word.contains("="), spec.options.first(where: { $0.name == word })?.takesValue == true {
                    index += 1
                }
            } else {
                count += 1
            }
            index += 1
        }
        return count
    }

    /// Whether the word at `index` is itself an option's value (so the word after it is not).
    private static func isOptionValue(at index: Int, in words: [String], spec: CommandSpec) -> Bool {
        var position = 0
        while position < index {
            let word = words[position]
            if !word.contains("="), spec.options.first(where: { $0.name == word })?.takesValue == true {
                if position + 1 == index { return true }
                position += 1
            }
            position += 1
        }
        return false
    }
}
