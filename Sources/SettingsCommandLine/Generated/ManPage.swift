import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settingsd help --man`: one roff manual page with every command, from their declarations.
enum ManPage {
    /// The page, in roff (`man -l -` shows it).
    static var roff: String {
        var page = [
            ".TH SETTINGSD 1 \"\" \"settingsd \(escaped(SettingsdVersion.current))\" \"User Commands\"",
            ".SH NAME",
            "settingsd \\- typed settings for Linux, durable in SQLite, with change notifications and sync",
            ".SH SYNOPSIS",
            ".B settingsd",
            ".I command",
            "[arguments] [options]",
            ".SH DESCRIPTION",
            text(
                "settingsd keeps typed settings in a SQLite database served by a daemon on a Unix socket: reads come from memory, writes are durable, every change is announced per key with its reason, and replicas (other daemons, apps' embedded stores, a PostgreSQL hub) converge after any partition. Without a running daemon, --db PATH works on a database file directly."
            ),
            ".SH COMMANDS",
        ]
        for command in Commands.all {
            page.append(".SS \(quoted("settingsd " + command.name))")
            page.append(text(command.overview))
            page.append(".PP")
            page.append(".B Usage:")
            page.append(text(command.usage))
            for argument in command.arguments {
                page += [".TP", ".I \(escaped(argument.name))", text(argument.help)]
            }
            for option in command.options {
                let label = option.value.map { "\\fB\(escaped(option.name))\\fR \\fI\(escaped($0))\\fR" }
                page += [".TP", label ?? ".B \(escaped(option.name))", text(option.help)]
            }
        }
        page += [
            ".SH ENVIRONMENT",
            ".TP", ".B SETTINGSD_SOCKET",
            text("the daemon's socket (default: $XDG_RUNTIME_DIR/settingsd/settingsd.sock)"),
            ".TP", ".B SETTINGSD_DB",
            text("the database file (default: $XDG_DATA_HOME/settingsd/settings.sqlite)"),
            ".TP", ".B SETTINGSD_HUB",
            text("the PostgreSQL hub to sync with (a libpq connection string or URI)"),
            ".SH EXIT STATUS",
            text("0 on success, 1 when the command failed (a missing key for get), 64 on bad usage."),
            ".SH SEE ALSO",
            ".BR dconf (1),",
            ".BR gsettings (1)",
        ]
        return page.joined(separator: "\n")
    }

    /// A line of running text: escaped, and never starting like a request.
    private static func text(_ line: String) -> String {
        let body = escaped(line)
        return body.hasPrefix(".") || body.hasPrefix("'") ? "\\&" + body : body
    }

    /// `text` in double quotes for a request's argument.
    private static func quoted(_ text: String) -> String {
        "\"" + escaped(text).replacingAll("\"", with: "\"\"") + "\""
    }

    /// Backslashes and dashes as roff wants them.
    private static func escaped(_ text: String) -> String {
        text.replacingAll("\\", with: "\\e").replacingAll("-", with: "\\-")
    }
}

extension String {
    /// This text with every `target` replaced (without Foundation, which the CLI keeps off its path).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
