import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd watch [KEY|PREFIX.|PREFIX*]...`: the daemon's change events, one line each, until
/// interrupted; it waits for a daemon that goes away and says `resync` when it is back.
enum WatchCommand {
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var keys: Set<String> = []
        var prefixes: [String] = []
        for argument in arguments.positionals {
            if argument.hasSuffix("*") {
                prefixes.append(String(argument.dropLast()))
            } else if argument.hasSuffix(".") {
                prefixes.append(argument)
            } else {
                keys.insert(argument)
            }
        }
        let filter: ChangeFilter =
            switch (keys.isEmpty, prefixes.isEmpty) {
            case (true, true): .all
            case (false, true): .keys(keys)
            case (true, false): .prefixes(prefixes)
            case (false, false): .keysOrPrefixes(keys: keys, prefixes: prefixes)
            }
        var client = try watching(filter, arguments).client
        while true {
            var change = try nextChange(client)
            if change == nil {
                // As the library's clients do: come back when the daemon does, and say `resync`
                // (what changed meanwhile is not replayed: re-read what you show).
                Output.standardError("the daemon went away; waiting for it to come back\n")
                let watch = try reconnecting(filter, arguments)
                client = watch.client
                change = SettingsChange(reason: .resync, origin: watch.replica, changes: [])
            }
            guard let change else { continue }
            if arguments.isSet(Options.jsonEvents) {
                Output.line(WireMessage.event(watch: 0, change).serialized())
                continue
            }
            if change.reason == .resync { Output.line("resync") }
            for keyChange in change.changes {
                let state = keyChange.value.map { "= \(Output.listed($0))" } ?? "deleted"
                Output.line("\(change.reason) \(keyChange.key) \(state)")
            }
        }
    }

    /// The next change a watch hears, or nil when the daemon went away.
    private static func nextChange(_ client: BlockingClient) throws(SettingsError) -> SettingsChange? {
        do {
            return try client.nextEvent().change
        } catch  where error.code == .connectionLost {
            return nil
        }
    }

    /// A connection watching `filter`, and the daemon's replica id.
    private static func watching(_ filter: ChangeFilter, _ arguments: ParsedArguments) throws(SettingsError)
        -> (client: BlockingClient, replica: ReplicaID)
    {
        let client = try arguments.daemon(timeout: 0)
        let replica = try client.status().replica
        try client.request(.watch(filter: filter))
        return (client, replica)
    }

    /// `watching`, tried again with a growing pause (0.1 s up to 5 s) while no daemon answers.
    private static func reconnecting(_ filter: ChangeFilter, _ arguments: ParsedArguments)
        throws(SettingsError)
        -> (client: BlockingClient, replica: ReplicaID)
    {
        var pause = 0.1
        while true {
            do throws(SettingsError) {
                return try watching(filter, arguments)
            } catch  where error.code == .daemonNotRunning || error.code == .connectionLost {
                usleep(useconds_t(pause * 1_000_000))
                pause = min(pause * 2, 5)
            }
        }
    }
}
