import SettingsStore

/// `settingsd history` and `settingsd revert`: the audit log and undo.
enum HistoryCommands {
    static func history(_ arguments: ParsedArguments) throws -> Int32 {
        // `acct.*` means the prefix `acct.`, as it does for watch.
        let key = try arguments.positionals(0...1).first.map { (text) throws(UsageError) in
            try arguments.key(text.hasSuffix(".*") ? String(text.dropLast()) : text)
        }
        let query = HistoryQuery(
            keyOrPrefix: key, sinceMilliseconds: try arguments.value(Options.since),
            untilMilliseconds: try arguments.value(Options.until),
            limit: try arguments.value(Options.limit) ?? 100)
        let fields = try arguments.requestTarget(forWriting: false).request(.history(query))
        guard case .array(let records)? = fields["records"] else { return 0 }
        for record in records {
            Output.line(
                arguments.isSet(Options.jsonLines) ? try jsonLine(record).serialized() : try humanLine(record)
            )
        }
        return 0
    }

    static func revert(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let target = try arguments.requestTarget(forWriting: true)
        if let version = try arguments.value(Options.toVersion) {
            _ = try target.request(.revert(key: key, version: version))
            return 0
        }
        guard let before = try arguments.value(Options.before) else {
            throw UsageError("revert needs --to VERSION or --before TIME", command: "revert")
        }
        let fields = try target.request(.revertBefore(keyOrPrefix: key, timeMilliseconds: before))
        ClientCommands.reportSkippedLocked(fields)
        if case .integer(let count)? = fields["reverted"] {
            Output.standardError(
                "reverted \(count) key(s) to their values before \(ISO8601.format(secondsSince1970: Double(before) / 1000))\n"
            )
        }
        return 0
    }

    /// `2026-11-29 14:03:07Z  audio.volume  0.5 → 0.8  uid 1000 /usr/bin/player  local`: the
    /// time in UTC, and values over 100 characters cut short (`--json` has them whole).
    private static func humanLine(_ record: JSONValue) throws -> String {
        let time =
            String(
                ISO8601.format(secondsSince1970: Double(milliseconds(record) / 1000)).map {
                    $0 == "T" ? " " : $0
                }
                .prefix(19)) + "Z"
        func shown(_ value: SettingValue) -> String {
            let text = Output.listed(value)
            guard text.count > 100 else { return text }
            return text.prefix(80) + "… (\(text.utf8.count) bytes)"
        }
        let before = try record["previous"].map { shown(try SettingValue(json: $0)) } ?? "unset"
        let after = try record["value"].map { shown(try SettingValue(json: $0)) } ?? "deleted"
        var line = "\(time)  \(ClientCommands.text(record["key"]))  \(before) → \(after)"
        if case .integer(let uid)? = record["uid"] {
            line += "  uid \(uid)"
            if case .string(let exe)? = record["exe"] { line += " \(exe)" }
        } else {
            line += "  from \(ClientCommands.text(record["replica"]))"
        }
        return line + "  \(ClientCommands.text(record["reason"]))"
    }

    /// The documented JSON form of a record: the wire's fields, with `time` in ISO 8601.
    private static func jsonLine(_ record: JSONValue) throws -> JSONValue {
        guard case .object(var members) = record else { return record }
        members["time"] = .string(ISO8601.format(secondsSince1970: Double(milliseconds(record)) / 1000))
        members["timeMs"] = nil
        return .object(members)
    }

    private static func milliseconds(_ record: JSONValue) -> Int64 {
        if case .integer(let value)? = record["timeMs"] { return value }
        return 0
    }
}
