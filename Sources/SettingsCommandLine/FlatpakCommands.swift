import SettingsGNOME
import SettingsStore

/// `settingsd flatpak migrate APP_ID [--dry-run]`: an app's host dconf values into its Flatpak
/// keyfile; `settingsd flatpak list`: the apps `run --flatpak` would mirror.
enum FlatpakCommands {
    static let dryRun = Flag("--dry-run", "say which keys would be copied, and write nothing")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = arguments.positionals
        let layout = FlatpakLayout.current
        switch positionals.first {
        case "list":
            guard positionals.count == 1 else { throw UsageError("list takes no APP_ID", command: "flatpak") }
            if arguments.isSet(dryRun) { throw UsageError("--dry-run goes with migrate", command: "flatpak") }
            for app in layout.apps() {
                let schemas = layout.schemaFolder(app) == nil ? "no compiled schemas" : "schemas"
                Output.line("\(app)  \(layout.keyfile(app))  (\(schemas))")
            }
            return 0
        case "migrate":
            guard positionals.count == 2 else {
                throw UsageError("migrate needs one APP_ID", command: "flatpak")
            }
            let migration = try FlatpakMigration(app: positionals[1], layout: layout)
            for (path, text) in migration.copied { Output.line("copy \(path) = \(text)") }
            for path in migration.kept { Output.line("keep \(path) (the keyfile has its own value)") }
            if arguments.isSet(dryRun) {
                Output.line(
                    "\(migration.copied.count) key(s) would be copied into \(migration.keyfile); nothing written"
                )
                return 0
            }
            try migration.apply()
            Output.line(
                "\(migration.copied.count) key(s) copied into \(migration.keyfile); dconf is left as it was")
            return 0
        default:
            throw UsageError("the action is list or migrate", command: "flatpak")
        }
    }
}
