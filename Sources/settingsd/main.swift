// settingsd: the command-line tool, linked statically so a command starts in about a millisecond.
// The daemon and the hub commands continue in settingsd-daemon (see `CommandLineBinary`).
import SettingsCommandLine

// The static link takes each library's dependencies from the imports of the modules compiled
// with -static-executable (this one): FoundationEssentials brings its own C shims and collections.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#endif

CLI.main(as: .client)
