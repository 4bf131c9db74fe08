// settingsd: the daemon (`settingsd run`) and the command-line tool that talks to it.
#if canImport(Glibc)
    import Glibc
#endif

exit(CLI.run(Array(CommandLine.arguments.dropFirst())))
