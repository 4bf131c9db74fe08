// settingsd: the daemon (`settingsd run`) and the command-line tool that talks to it.
#if canImport(Glibc)
    import Glibc
#endif

/// The arguments as given, refusing any that is not valid UTF-8 rather than altering it.
private func arguments() -> [String]? {
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

exit(arguments().map(CLI.run) ?? 64)
