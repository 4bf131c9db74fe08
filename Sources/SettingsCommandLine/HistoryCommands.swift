import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

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
        for record in try arguments.service(forWriting: false).history(query) {
            Output.line(
                arguments.isSet(Options.jsonLines) ? jsonLine(record).serialized() : humanLine(record))
        }
        return 0
    }

    static func revert(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let service = try arguments.service(forWriting: true)
        if let version = try arguments.value(Options.toVersion) {
            try service.revert(key, to: version)
            return 0
        }
        guard let before = try arguments.value(Options.before) else {
            throw UsageError("revert needs --to VERSION or --before TIME", command: "revert")
        }
        let report = try service.revert(key, before: before)
        ClientCommands.reportSkippedLocked(report)
        Output.standardError(
            "reverted \(report.count) key(s) to their values before \(ISO8601.format(secondsSince1970: Double(before) / 1000))\n"
        )
        return 0
    }

    /// `2026-11-29 14:03:07Z  audio.volume  0.5 → 0.8  uid 1000 /usr/bin/player  local`: the
    /// time in UTC, and values over 100 characters cut short (`--json` has them whole).
    private static func humanLine(_ record: HistoryRecord) -> String {
        let time =
            String(
                ISO8601.format(secondsSince1970: Double(record.timeMilliseconds / 1000)).map {
                    $0 == "T" ? " " : $0
                }
                .prefix(19)) + "Z"
        func shown(_ value: SettingValue) -> String {
            let text = Output.listed(value)
            guard text.count > 100 else { return text }
            return text.prefix(80) + "… (\(text.utf8.count) bytes)"
        }
        let before = record.previous.map(shown) ?? "unset"
        let after = record.value.map(shown) ?? "deleted"
        var line = "\(time)  \(record.key)  \(before) → \(after)"
        if let actor = record.actor {
            line += "  uid \(actor.uid)"
            if let exe = actor.executable { line += " \(exe)" }
        } else {
            // The machine that made the change (its version's replica), by name when known.
            let writer = record.version.replica
            line +=
                "  from "
                + (record.originName.map { "\($0) (\(writer.description.prefix(8)))" } ?? "\(writer)")
        }
        return line + "  \(record.reason)"
    }

    /// The documented JSON form of a record: the wire's fields, with `time` in ISO 8601.
    private static func jsonLine(_ record: HistoryRecord) -> JSONValue {
        guard case .object(var members) = record.json else { return record.json }
        members["time"] = .string(ISO8601.format(secondsSince1970: Double(record.timeMilliseconds) / 1000))
        members["timeMs"] = nil
        return .object(members)
    }
}
