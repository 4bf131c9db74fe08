import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// A password given on the command line (`--hub URL`) is readable by every user of the machine in
/// `/proc/PID/cmdline` for as long as the process lives. `settingsd run` warns, and hands the URL
/// to `settingsd-daemon` through `$SETTINGSD_HUB` instead of its arguments (a process's
/// environment is readable by its own user only), so the long-lived daemon does not show it.
enum HubCredentials {
    /// Whether `conninfo` carries a password: `password=` or `sslpassword=` in a key=value
    /// string or a URI's query, or `user:password@` in a `postgresql://` URI. Read without
    /// libpq, which the static `settingsd` cannot load.
    static func hasPassword(_ conninfo: String) -> Bool {
        let text = conninfo.lowercased()
        for scheme in ["postgresql://", "postgres://"] where text.hasPrefix(scheme) {
            let rest = text.dropFirst(scheme.count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
        }
        let bytes = Array(text.utf8)
        let word = Array("password".utf8)
        var index = 0
        while index + word.count <= bytes.count {
            if bytes[index..<index + word.count].elementsEqual(word) {
                var after = index + word.count
                while after < bytes.count,
                    bytes[after] == UInt8(ascii: " ") || bytes[after] == UInt8(ascii: "\t")
                {
                    after += 1
                }
                if after < bytes.count, bytes[after] == UInt8(ascii: "=") { return true }
            }
            index += 1
        }
        return false
    }

    /// The arguments with a password-carrying `--hub` value taken out and put in `$SETTINGSD_HUB`,
    /// and a warning on stderr; the arguments unchanged when there is none.
    static func hidingPassword(in arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        var hidden = false
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            var value: String?
            var width = 1
            if argument == "--hub", index + 1 < arguments.count {
                value = arguments[index + 1]
                width = 2
            } else if argument.hasPrefix("--hub=") {
                value = String(argument.dropFirst("--hub=".count))
            }
            if let value, hasPassword(value) {
                setenv("SETTINGSD_HUB", value, 1)
                hidden = true
            } else {
                result += arguments[index..<index + width]
            }
            index += width
        }
        if hidden { warn() }
        return result
    }

    /// Tells the user where the password belongs.
    static func warn() {
        Output.standardError(
            "Warning: a password in --hub is visible to every user of this machine (ps, /proc) while the command starts; put it in ~/.pgpass, a service file (PGSERVICEFILE) or $SETTINGSD_HUB instead\n"
        )
    }
}
