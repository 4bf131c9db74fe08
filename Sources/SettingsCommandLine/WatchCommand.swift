import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd watch [KEY|PREFIX.|PREFIX*]... [--since N]`: the daemon's change events, one line
/// each, until interrupted. It waits for a daemon that goes away and, when it is back, resumes
/// from the last change it printed (the daemon replays what it missed); it says `resync` only
/// when that cannot be (the history no longer reaches back so far, or another store answers).
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
        var watch = try watching(
            filter, since: try arguments.value(Options.sinceSequence).map(Int64.init), arguments)
        while true {
            var change = try nextChange(watch.client)
            if change == nil {
                // As the library's clients do: come back when the daemon does, from the last change
                // printed; `resync` only when the daemon cannot replay from there.
                Output.standardError("the daemon went away; waiting for it to come back\n")
                let resumed = try reconnecting(filter, after: watch, arguments)
                if !resumed.resumes {
                    change = SettingsChange(
                        reason: .resync, origin: resumed.replica, changes: [], sequence: resumed.delivered)
                }
                watch = resumed
            }
            guard let change else { continue }
            watch.delivered = max(watch.delivered, change.sequence)
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

    /// A connection watching, the daemon's replica id, the last sequence number printed, and
    /// whether it resumed a watch from there.
    private struct Watching {
        let client: BlockingClient
        let replica: ReplicaID
        var delivered: Int64
        let resumes: Bool
    }

    /// A connection watching `filter`, after `since` first when given.
    private static func watching(_ filter: ChangeFilter, since: Int64?, _ arguments: ParsedArguments)
        throws(SettingsError) -> Watching
    {
        let client = try arguments.daemon(timeout: 0)
        return try watch(filter, since: since, on: client, replica: try client.status().replica)
    }

    /// Asks `client`, the daemon `replica`, to watch `filter`, after `since` first when given.
    private static func watch(
        _ filter: ChangeFilter, since: Int64?, on client: BlockingClient, replica: ReplicaID
    ) throws(SettingsError) -> Watching {
        let answer = try client.request(.watch(filter: filter, since: since))
        let sequence = if case .integer(let sequence)? = answer["sequence"] { sequence } else { Int64(0) }
        return Watching(client: client, replica: replica, delivered: since ?? sequence, resumes: since != nil)
    }

    /// The watch again once a daemon answers (tried with a growing pause, 0.1 s up to 5 s): from
    /// where `previous` stopped when that daemon can replay it, else afresh.
    private static func reconnecting(
        _ filter: ChangeFilter, after previous: Watching, _ arguments: ParsedArguments
    )
        throws(SettingsError) -> Watching
    {
        var pause = 0.1
        while true {
            do throws(SettingsError) {
                let client = try arguments.daemon(timeout: 0)
                let replica = try client.status().replica
                let since = replica == previous.replica ? previous.delivered : nil
                do throws(SettingsError) {
                    return try watch(filter, since: since, on: client, replica: replica)
                } catch  where error.code == .historyCompacted || error.code == .invalidValue {
                    Output.standardError("cannot replay what was missed: \(error.message)\n")
                    return try watching(filter, since: nil, arguments)
                }
            } catch  where error.code == .daemonNotRunning || error.code == .connectionLost {
                usleep(useconds_t(pause * 1_000_000))
                pause = min(pause * 2, 5)
            }
        }
    }
}
