import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Why an SSH peer's `ssh` ended before its bridge answered, in words a user acts on: read from
/// what `ssh` (or the remote shell) wrote to standard error and how it exited.
enum SSHFailure {
    /// The error for an `ssh` that ended (wait `status`, nil if it had to be killed) having
    /// written `output` to its standard error, on its way to `address`.
    static func error(output: String, status: Int32?, address: SSHAddress, remoteCommand: String)
        -> SettingsError
    {
        let said = output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        let lower = output.lowercased()
        let host = address.host
        let reason: (SettingsError.Code, String)
        if lower.firstRange(of: "host key verification failed") != nil
            || lower.firstRange(of: "remote host identification has changed") != nil
            || lower.firstRange(of: "no ecdsa host key is known") != nil
            || lower.firstRange(of: "host key for") != nil && lower.firstRange(of: "has changed") != nil
        {
            reason = (
                .accessDenied,
                "the host key of \(host) is unknown or has changed: check it and accept it with 'ssh \(host)' once (ssh said: \(said))"
            )
        } else if lower.firstRange(of: "permission denied") != nil {
            reason = (
                .accessDenied,
                "\(host) refused the SSH login\(address.user.map { " as \($0)" } ?? ""): no key it accepts is offered without a prompt (load it with ssh-add, or add it to the remote authorized_keys; ssh said: \(said))"
            )
        } else if lower.firstRange(of: "connection refused") != nil {
            reason = (
                .daemonNotRunning,
                "no SSH server answers on \(host)\(address.port.map { " port \($0)" } ?? "") (connection refused)"
            )
        } else if lower.firstRange(of: "could not resolve hostname") != nil
            || lower.firstRange(of: "name or service not known") != nil
        {
            reason = (.daemonNotRunning, "the host name \(host) is not known (\(said))")
        } else if lower.firstRange(of: "connection timed out") != nil
            || lower.firstRange(of: "no route to host") != nil
            || lower.firstRange(of: "network is unreachable") != nil
            || lower.firstRange(of: "operation timed out") != nil
        {
            reason = (.timeout, "\(host) cannot be reached (\(said))")
        } else if lower.firstRange(of: "unknown command") != nil && lower.firstRange(of: "bridge") != nil {
            reason = (
                .unsupportedVersion,
                "the settingsd on \(host) is too old for SSH peers (it has no 'bridge' command): install this release there"
            )
        } else if exitCode(status) == 127 || lower.firstRange(of: "command not found") != nil
            || lower.firstRange(of: "no such file or directory") != nil
        {
            reason = (
                .daemonNotRunning,
                "'\(remoteCommand)' is not found on \(host): install settingsd there, or name its path with --remote-settingsd (the remote shell said: \(said))"
            )
        } else if said.isEmpty {
            let how = status.map { describe($0) } ?? "was stopped"
            reason = (.connectionLost, "ssh to \(host) \(how) before the remote settingsd bridge answered")
        } else {
            reason = (.connectionLost, "ssh to \(host) failed: \(said)")
        }
        return SettingsError(reason.0, reason.1)
    }

    /// The exit code of a wait status, nil when the process was killed by a signal.
    private static func exitCode(_ status: Int32?) -> Int32? {
        guard let status, status & 0x7F == 0 else { return nil }
        return (status >> 8) & 0xFF
    }

    /// "exited with status 255", "was killed by signal 9".
    private static func describe(_ status: Int32) -> String {
        if let code = exitCode(status) { return "exited with status \(code)" }
        return "was killed by signal \(status & 0x7F)"
    }
}
