import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The commands that talk to a daemon (or a database with `--db`).
enum ClientCommands {
    static func get(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let target = try arguments.requestTarget(forWriting: false)
        // The effective value, layers and all; `--explain` asks where it comes from too.
        let fields = try target.request(
            arguments.isSet(Options.explain) ? .describe(key: key) : .get(key: key))
        guard let json = fields["value"] else {
            Output.error("'\(key)' is not set")
            return 1
        }
        let value = try SettingValue(json: json)
        let source = arguments.isSet(Options.explain) ? fields["source"] : nil
        if arguments.isSet(Options.jsonValue) {
            // The machine form stays one JSON document: with --explain, the value and its source.
            var explained: [String: JSONValue] = ["value": json]
            explained["source"] = source
            explained["schemaProblem"] = source == nil ? nil : fields["schemaProblem"]
            Output.line(source == nil ? json.serialized() : JSONValue.object(explained).serialized())
            return 0
        }
        Output.line(Output.text(of: value))
        if case .string(let text)? = source { Output.line("from: \(text)") }
        if source != nil, case .string(let problem)? = fields["schemaProblem"] {
            Output.line("warning: the schema changed since: \(problem)")
        }
        return 0
    }

    static func set(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = try arguments.positionals(2...2)
        _ = try arguments.key(positionals[0])
        let given = arguments.isSet(Options.jsonInput) ? "json" : try arguments.value(Options.type)?.rawValue
        // A value typed on the command line is checked before anything is contacted.
        let parsed = try given.map { type throws(UsageError) in
            try ValueParser.parse(positionals[1], type: type)
        }
        let target = try arguments.requestTarget(forWriting: true)
        let value: SettingValue
        if let parsed {
            value = parsed
        } else {
            // A schema that types the key saves the --type.
            let rule = try target.request(.describe(key: positionals[0]))["schema"]
            var type = "string"
            if case .string(let declared)? = rule?["type"] {
                type = ValueParser.type(forSchemaType: declared)
            }
            // A GSettings-typed array, dictionary, bytes or variant reads as GVariant text, as
            // `gsettings set` reads it: "['us', 'de']".
            if case .string(let text)? = rule?["gvariant"], let gvariant = try? GVariantType(text),
                !["bool", "int", "double", "string"].contains(type)
            {
                do throws(SettingsError) {
                    value = try GVariant(parsing: positionals[1], type: gvariant).settingValue()
                } catch {
                    throw UsageError(
                        "VALUE is not GVariant text of type '\(gvariant)': \(error.message)", command: "set")
                }
            } else {
                value = try ValueParser.parse(positionals[1], type: type)
            }
        }
        _ = try target.request(.set(key: positionals[0], value: value))
        return 0
    }

    static func describe(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let fields = try arguments.requestTarget(forWriting: false).request(.describe(key: key))
        if arguments.isSet(Options.json) {
            Output.line(JSONValue.object(fields).serialized())
            return 0
        }
        Output.line("key: \(key)")
        if let rule = fields["schema"] {
            let declared = rule["key"] == .string(key) ? "" : " (by pattern \(text(rule["key"])))"
            let gvariant = rule["gvariant"].map { " (GVariant '\(text($0))')" } ?? ""
            Output.line("type: \(text(rule["type"]))\(gvariant)\(declared)")
            if let value = rule["default"] {
                Output.line("default: \(Output.listed(try SettingValue(json: value)))")
            }
            if rule["min"] != nil || rule["max"] != nil {
                Output.line("range: \(number(rule["min"]) ?? "-∞") to \(number(rule["max"]) ?? "+∞")")
            }
            if case .array(let choices)? = rule["choices"] {
                Output.line("choices: \(choices.map { text($0) }.joined(separator: ", "))")
            }
            if let length = rule["maxLength"] { Output.line("maximum length: \(text(length))") }
            if let summary = rule["summary"] { Output.line("summary: \(text(summary))") }
            if let description = rule["description"] { Output.line("description: \(text(description))") }
            if rule["secret"] == .bool(true) {
                Output.line("secret: yes (the history keeps fingerprints, not values)")
            }
            Output.line("schema: \(text(rule["file"]))")
        } else {
            Output.line("type: any (no schema declares this key)")
        }
        let scope = fields["scope"] ?? fields["schema"]?["scope"] ?? "synced"
        let scopeRule = fields["scopeRule"].map { " (by \(text($0["key"])) in \(text($0["file"])))" } ?? ""
        Output.line("scope: \(text(scope))\(scope == "local" ? " (never synced)" : "")\(scopeRule)")
        if let value = fields["systemDefault"] {
            Output.line(
                "system default: \(Output.listed(try SettingValue(json: value))) (\(text(fields["systemDefaultFile"])))"
            )
        }
        if let file = fields["lockedBy"] { Output.line("locked by: \(text(file))") }
        if let value = fields["value"] {
            Output.line("value: \(Output.listed(try SettingValue(json: value)))")
        } else {
            Output.line("value: unset")
        }
        Output.line("from: \(text(fields["source"]))")
        if case .string(let problem)? = fields["schemaProblem"] {
            Output.line("warning: the schema changed since: \(problem)")
        }
        return 0
    }

    static func reset(_ arguments: ParsedArguments) throws -> Int32 {
        let all = arguments.isSet(Options.all)
        let key =
            all
            ? "" : try arguments.key(try arguments.positionals(1...1)[0])
        if all { _ = try arguments.positionals(0...0) }
        let fields = try arguments.requestTarget(forWriting: true).request(.reset(keyOrPrefix: key))
        reportSkippedLocked(fields)
        if case .integer(let removed)? = fields["removed"], all || key.hasSuffix(".") {
            Output.standardError(
                "reset \(removed) key(s)\(all ? "" : " under '\(key)'") to their defaults\n")
        }
        return 0
    }

    private static func number(_ value: JSONValue?) -> String? {
        switch value {
        case .double(let number)?: number == number.rounded() ? String(Int64(number)) : String(number)
        case .integer(let number)?: String(number)
        default: nil
        }
    }

    static func delete(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        _ = try arguments.requestTarget(forWriting: true).request(.delete(key: key))
        return 0
    }

    static func list(_ arguments: ParsedArguments) throws -> Int32 {
        let prefix = try arguments.positionals(0...1).first ?? ""
        if arguments.isSet(Options.pretty) && !arguments.isSet(Options.jsonObject) {
            throw UsageError("--pretty goes with --json", command: "list")
        }
        if arguments.isSet(Options.keysOnly) {
            guard !arguments.isSet(Options.jsonObject), !arguments.isSet(Options.schema) else {
                throw UsageError("--keys prints names only: not with --json or --schema", command: "list")
            }
            let fields = try arguments.requestTarget(forWriting: false).request(
                .list(prefix: prefix, includeValues: false))
            guard case .array(let keys)? = fields["keys"] else { return 0 }
            for case .string(let key) in keys { Output.line(key) }
            return 0
        }
        if arguments.isSet(Options.schema) { return try listSchema(arguments, prefix: prefix) }
        let fields = try arguments.requestTarget(forWriting: false).request(
            .list(prefix: prefix, includeValues: true))
        let values = fields["values"] ?? .object([:])
        if arguments.isSet(Options.jsonObject) {
            Output.line(values.serialized(pretty: arguments.isSet(Options.pretty)))
            return 0
        }
        guard case .array(let keys)? = fields["keys"] else { return 0 }
        var locked: Set<String> = []
        if case .array(let names)? = fields["locked"] {
            for case .string(let name) in names { locked.insert(name) }
        }
        for case .string(let key) in keys {
            guard let json = values[key] else { continue }
            let mark = locked.contains(key) ? "  (locked)" : ""
            Output.line("\(Output.listedKey(key)) = \(Output.listed(try SettingValue(json: json)))\(mark)")
        }
        return 0
    }

    /// Names, on stderr, the locked keys a whole-store operation left as they are.
    static func reportSkippedLocked(_ fields: [String: JSONValue]) {
        guard case .array(let names)? = fields["skippedLocked"], !names.isEmpty else { return }
        let keys = names.map { text($0) }
        Output.standardError(
            "skipped \(keys.count) locked key(s), left as the lock holds them: \(keys.prefix(20).joined(separator: ", "))\(keys.count > 20 ? ", …" : "")\n"
        )
    }

    /// `list --schema`: the declared keys under `prefix` with their effective values.
    private static func listSchema(_ arguments: ParsedArguments, prefix: String) throws -> Int32 {
        let fields = try arguments.requestTarget(forWriting: false).request(.schema)
        guard case .array(let keys)? = fields["keys"] else { return 0 }
        let selected = keys.filter { entry in
            if case .string(let key)? = entry["rule"]?["key"] { return key.hasPrefix(prefix) }
            return false
        }
        if arguments.isSet(Options.jsonObject) {
            Output.line(JSONValue.array(selected).serialized(pretty: arguments.isSet(Options.pretty)))
            return 0
        }
        for entry in selected {
            let rule = entry["rule"]
            let value = try entry["value"].map { Output.listed(try SettingValue(json: $0)) } ?? "unset"
            let scope = rule?["scope"] == "local" ? ", local" : ""
            if rule?["scopeOnly"] == .bool(true) {
                Output.line("\(text(rule?["key"])) (scope \(text(rule?["scope"])))  [\(text(rule?["file"]))]")
                continue
            }
            let problem = entry["schemaProblem"].map { "  (does not fit the schema now: \(text($0)))" } ?? ""
            Output.line(
                "\(text(rule?["key"])) (\(text(rule?["type"]))\(scope)) = \(value)  [\(text(entry["source"]))]\(problem)"
            )
        }
        return 0
    }

    static func watch(_ arguments: ParsedArguments) throws -> Int32 {
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
        let replica = try DaemonStatus(fields: client.request(.status)).replica
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

    static func export(_ arguments: ParsedArguments) throws -> Int32 {
        if try arguments.value(Options.format) == .dconf {
            return try DconfCommands.export(arguments, target: arguments.requestTarget(forWriting: false))
        }
        let file = try arguments.positionals(0...1).first ?? "-"
        let at = try arguments.value(Options.at)
        let fields = try arguments.requestTarget(forWriting: false).request(
            at.map { .exportAt(timeMilliseconds: $0) } ?? .export)
        try FileIO.write((fields["document"] ?? .null).serialized(pretty: true), to: file)
        return 0
    }

    static func importDocument(_ arguments: ParsedArguments) throws -> Int32 {
        if try arguments.value(Options.format) == .dconf {
            return try DconfCommands.importFile(arguments, target: arguments.requestTarget(forWriting: true))
        }
        let file = try arguments.positionals(1...1)[0]
        let document: ExportDocument
        do throws(SettingsError) {
            document = try ExportDocument(jsonText: FileIO.read(file))
        } catch {
            throw SettingsError(error.code, "'\(file)' cannot be imported: \(error.message)", path: file)
        }
        let fields = try arguments.requestTarget(forWriting: true).importDocument(
            document, replace: arguments.isSet(Options.replace), under: [])
        reportSkippedLocked(fields)
        if case .integer(let count)? = fields["imported"] {
            Output.standardError("imported \(count) value(s)\n")
        }
        return 0
    }

    static func sync(_ arguments: ParsedArguments) throws -> Int32 {
        _ = try arguments.positionals(0...0)
        guard arguments.isSet(Options.wait) else {
            throw UsageError(
                "sync needs --wait (it waits until connected peers have caught up)", command: "sync")
        }
        let timeout = try arguments.value(Options.timeout) ?? 60
        let client = try arguments.daemon()
        let deadline = SettingsConfiguration.systemClock() + UInt64(timeout * 1000)
        let terminal = isatty(STDERR_FILENO) != 0
        // The first look makes every hub compare digests again: rows edited by hand change no
        // counter, and an agreement found before them proves nothing now.
        var request = WireRequest.statusVerifyingHubs
        while true {
            let status = try DaemonStatus(fields: client.request(request))
            request = .status
            let connected = status.peers.filter(\.isConnected)
            if connected.isEmpty, status.hubs.isEmpty {
                Output.standardError("no peer is connected and no hub is set: nothing to wait for\n")
                return 0
            }
            let waiting = Self.syncBacklog(status, connected: connected)
            if waiting.isEmpty {
                let hubs = status.hubs.isEmpty ? "" : " and \(status.hubs.count) hub(s)"
                Output.standardError(
                    (terminal ? "\r\u{1B}[K" : "")
                        + "in sync with \(connected.count) peer(s)\(hubs): all agree\n")
                return 0
            }
            if terminal { Output.standardError("\r\u{1B}[Kwaiting: \(waiting)") }
            guard SettingsConfiguration.systemClock() < deadline else {
                if terminal { Output.standardError("\n") }
                throw SettingsError(.timeout, "not in sync after \(Output.seconds(timeout)) s: \(waiting)")
            }
            usleep(20_000)
        }
    }

    /// What `sync --wait` still waits for, in words; empty when in sync: every connected peer
    /// acknowledged everything and agrees (anti-entropy), every hub is connected, has every local
    /// change, has nothing left to pull and agrees (its digest equals this replica's).
    private static func syncBacklog(_ status: DaemonStatus, connected: [DaemonStatus.Peer]) -> String {
        var waiting: [String] = []
        let pending = connected.reduce(0) { $0 + $1.pendingOutgoing }
        if pending > 0 { waiting.append("\(pending) change(s) pending for peers") }
        for peer in connected where pending == 0 && !peer.agrees {
            waiting.append("peer \(peer.replica): \(peer.agreement)")
        }
        for hub in status.hubs {
            if !hub.isConnected {
                waiting.append("hub \(hub.address): not connected\(hub.lastError.map { " (\($0))" } ?? "")")
            } else if hub.pendingUp > 0 {
                waiting.append("hub \(hub.address): \(hub.pendingUp) change(s) to push")
            } else if hub.pendingDown > 0 {
                waiting.append("hub \(hub.address): \(hub.pendingDown) change(s) to pull")
            } else if !hub.agreement.hasPrefix("agreed") {
                waiting.append("hub \(hub.address): \(hub.agreement)")
            }
        }
        return waiting.joined(separator: ", ")
    }

    static func status(_ arguments: ParsedArguments) throws -> Int32 {
        _ = try arguments.positionals(0...0)
        var result = try arguments.requestTarget(forWriting: false).request(.status)
        if arguments.isSet(Options.json) {
            Output.line(JSONValue.object(result).serialized())
            return 0
        }
        let peers = result.removeValue(forKey: "peers")
        let links = result.removeValue(forKey: "links")
        let hubs = result.removeValue(forKey: "hubs")
        let rows: [(label: String, field: String, unit: String)] = [
            ("replica", "replica", ""), ("database", "database", ""), ("socket", "socket", ""),
            ("version", "version", ""), ("pid", "pid", ""), ("uptime", "uptimeSeconds", " s"),
            ("keys", "keys", ""), ("size", "bytes", " bytes"), ("sequence", "sequence", ""),
            ("clients", "clients", ""), ("watches", "watches", ""), ("digest", "digest", ""),
        ]
        for row in rows {
            guard let value = result.removeValue(forKey: row.field) else { continue }
            Output.line("\(row.label): \(text(value))\(row.unit)")
        }
        // Fields a newer daemon adds still show, under their wire names.
        for (name, value) in result.sorted(by: { $0.key < $1.key }) { Output.line("\(name): \(text(value))") }
        if case .array(let links)? = links {
            for link in links {
                var line = "link \(text(link["address"])): \(text(link["state"]))"
                if let error = link["lastError"] {
                    line += ", \(text(link["failures"])) failure(s), last: \(text(error))"
                }
                Output.line(line)
            }
        }
        if case .array(let hubs)? = hubs {
            for hub in hubs {
                var line =
                    "hub \(text(hub["address"])), namespace \(text(hub["namespace"])): "
                    + (hub["connected"] == .bool(true) ? "connected" : "not connected")
                    + ", \(text(hub["pendingUp"])) change(s) to push, \(text(hub["pendingDown"])) to pull"
                    + ", \(text(hub["agreement"] ?? "unknown"))"
                if hub["mode"] == .string("poll") {
                    line += ", polling (through a pooler) every \(text(hub["pollSeconds"] ?? "?")) s"
                }
                if case .integer(let repaired)? = hub["repairedKeys"], repaired > 0 {
                    line += ", \(repaired) key(s) repaired"
                }
                line += clockNotes(hub)
                if let error = hub["lastError"] { line += ", last error: \(text(error))" }
                if let rewind = hub["lastRewind"] { line += ", last rewind: \(text(rewind))" }
                if let change = hub["lastAccountChange"] { line += ", \(text(change))" }
                Output.line(line)
            }
        }
        guard case .array(let entries)? = peers, !entries.isEmpty else {
            Output.line("peers: none")
            return 0
        }
        let now = Int64(SettingsConfiguration.systemClock())
        for peer in entries {
            let state = peer["connected"] == .bool(true) ? "connected" : "disconnected"
            let contact =
                if case .integer(let milliseconds)? = peer["lastContactMs"], milliseconds > 0 {
                    String(Double(now - milliseconds) / 1000) + " s ago"
                } else {
                    "never"
                }
            var line =
                "peer \(text(peer["replica"])) (\(text(peer["address"]))): \(state), \(text(peer["agreement"])), "
                + "last contact \(contact), \(text(peer["pendingOut"])) change(s) to send, "
                + "\(text(peer["pendingIn"])) to receive"
            line += clockNotes(peer)
            Output.line(line)
        }
        return 0
    }

    /// What `status` says of a peer's or a hub's clock: how far off it is, from a second on, and
    /// how many of its entries were stamped beyond this clock's bound.
    static func clockNotes(_ member: JSONValue) -> String {
        var notes = ""
        if case .integer(let offset)? = member["clockOffsetMs"], offset.magnitude >= 1000 {
            notes += ", clock \(offset / 1000) s \(offset > 0 ? "ahead" : "behind")"
        }
        if case .integer(let ahead)? = member["entriesAheadOfClock"], ahead > 0 {
            notes += ", \(ahead) entries stamped ahead of this clock"
        }
        return notes
    }

    /// A wire value for a line of text: strings as they are, the rest as JSON, `?` when absent.
    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let string)?: string
        case let other?: other.serialized()
        case nil: "?"
        }
    }
}
