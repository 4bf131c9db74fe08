import SettingsStore

/// The GNOME keys that describe one machine rather than its user, and those that hold commands
/// a desktop runs, shipped as a schema file read before every other: they are kept `local`
/// (never synced), so a window's size, a monitor's scale or a proxy stays on the machine it was
/// set on, and no member of a shared namespace can bind a key to a command on everyone's desktop. Any schema file can say otherwise,
/// pattern by pattern or key by key (`"org.gnome.*.window-size": {"scope": "synced"}`); the
/// list and the reasons are in docs/SCHEMA.md ("Keys that stay on one machine").
enum MachineKeys {
    /// The name the rules carry as their file.
    static let fileName = "(built in) machine-keys.json"

    /// The rules, parsed once (`MachineKeysTests` holds the text to parsing without error).
    static let rules: [SchemaRule] =
        (try? SettingsSchema.rules(in: { Array(text.utf8) }, file: fileName)) ?? []

    static let text = """
        {"format": "settingsd-schema", "version": 1, "keys": {
          "org.gnome.*.window-size": {"scope": "local", "summary": "a window's size on this screen"},
          "org.gnome.*.window-width": {"scope": "local"},
          "org.gnome.*.window-height": {"scope": "local"},
          "org.gnome.*.window-position": {"scope": "local"},
          "org.gnome.*.window-state": {"scope": "local"},
          "org.gnome.*.window-maximized": {"scope": "local"},
          "org.gnome.*.window-is-maximized": {"scope": "local"},
          "org.gnome.*.is-maximized": {"scope": "local"},
          "org.gnome.*.maximized": {"scope": "local"},
          "org.gnome.*.initial-size": {"scope": "local"},
          "org.gnome.*.sidebar-width": {"scope": "local"},
          "org.gnome.nautilus.window-state.*": {"scope": "local"},
          "flatpak.*.window-size": {"scope": "local", "summary": "a Flatpak app's window on this screen"},
          "flatpak.*.window-width": {"scope": "local"},
          "flatpak.*.window-height": {"scope": "local"},
          "flatpak.*.window-position": {"scope": "local"},
          "flatpak.*.window-state": {"scope": "local"},
          "flatpak.*.window-maximized": {"scope": "local"},
          "flatpak.*.window-is-maximized": {"scope": "local"},
          "flatpak.*.is-maximized": {"scope": "local"},
          "flatpak.*.maximized": {"scope": "local"},
          "flatpak.*.initial-size": {"scope": "local"},
          "flatpak.*.sidebar-width": {"scope": "local"},
          "flatpak.*.last-folder-uri": {"scope": "local", "summary": "a folder of this machine"},
          "org.gtk.*.window-size": {"scope": "local"},
          "org.gtk.*.window-position": {"scope": "local"},
          "org.gtk.*.sidebar-width": {"scope": "local"},
          "org.gtk.settings.file-chooser.last-folder-uri": {"scope": "local", "summary": "a folder of this machine"},
          "org.gtk.gtk4.settings.file-chooser.last-folder-uri": {"scope": "local"},
          "org.gnome.desktop.interface.scaling-factor": {"scope": "local", "summary": "this machine's monitors"},
          "org.gnome.desktop.interface.text-scaling-factor": {"scope": "local"},
          "org.gnome.settings-daemon.plugins.color.night-light-last-coordinates": {"scope": "local", "summary": "where this machine was"},
          "system.proxy.*": {"scope": "local", "summary": "this machine's network"},
          "org.gnome.desktop.peripherals.tablets.*": {"scope": "local", "summary": "settings of one device, by its id"},
          "org.gnome.desktop.peripherals.stylus.*": {"scope": "local"},
          "org.gnome.desktop.input-sources.mru-sources": {"scope": "local", "summary": "changes at every switch"},
          "org.gnome.evolution-data-server.calendar.reminders-past": {"scope": "local", "summary": "changes all day"},
          "org.gnome.evolution-data-server.calendar.reminders-snoozed": {"scope": "local"},
          "org.gnome.software.check-timestamp": {"scope": "local", "summary": "this machine's updates"},
          "org.gnome.software.install-timestamp": {"scope": "local"},
          "org.gnome.software.online-updates-timestamp": {"scope": "local"},
          "org.gnome.software.update-notification-timestamp": {"scope": "local"},
          "org.gnome.software.upgrade-notification-timestamp": {"scope": "local"},
          "org.gnome.software.security-timestamp": {"scope": "local"},
          "org.gnome.control-center.last-panel": {"scope": "local"},
          "org.gnome.shell.extensions.gsconnect.id": {"scope": "local", "summary": "this machine's identity to its phone"},
          "org.gnome.shell.extensions.gsconnect.name": {"scope": "local"},
          "org.gnome.shell.extensions.gsconnect.certificate-pem": {"scope": "local"},
          "org.gnome.shell.extensions.gsconnect.private-key-pem": {"scope": "local"},
          "org.gnome.shell.extensions.gsconnect.devices": {"scope": "local"},
          "org.gnome.shell.extensions.gsconnect.device.*": {"scope": "local"},
          "org.gnome.settings-daemon.plugins.media-keys.custom-keybindings": {"scope": "local", "summary": "commands bound to keys: run by whichever desktop receives them"},
          "org.gnome.settings-daemon.plugins.media-keys.custom-keybindings.*": {"scope": "local"},
          "org.gnome.desktop.applications.*": {"scope": "local", "summary": "commands run as default applications"},
          "org.gnome.desktop.screensaver.logout-command": {"scope": "local", "summary": "a command the screen shield runs"},
          "org.gnome.desktop.screensaver.embedded-keyboard-command": {"scope": "local"},
          "org.gnome.desktop.media-handling.autorun-x-content-start-app": {"scope": "local", "summary": "applications started when media is inserted"}
        }}
        """
}
