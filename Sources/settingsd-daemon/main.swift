// settingsd-daemon: the same command line, linked dynamically and position-independent: it runs
// the daemon and loads libpq for the hub, which the static settingsd cannot.
import SettingsCommandLine

CLI.main(as: .daemon)
