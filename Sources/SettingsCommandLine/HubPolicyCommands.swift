import SettingsDaemonClient
import SettingsStore
import SettingsSync

/// `settingsd hub policy set|show|list|history|remove|group` and `settingsd hub report`.
enum HubPolicyCommands {
    static let target = Option<String>(
        "--target", "TARGET",
        "hub policy set: whom the policy is for: ROLE (a group: every machine of every role that is a member), machine:NAME or machine:ID, machine-group:NAME (repeatable)",
        repeatable: true)
    static let dryRun = Flag(
        "--dry-run",
        "hub policy set/remove: say which keys change and which machines it reaches, and write nothing")
    static let unseenAfter = Option<Duration>(
        "--unseen-after", "DURATION",
        "hub report: a machine not heard of for this long is 'not seen' rather than 'pending' (default 1d; s, m, h or d)",
        expecting: "a duration such as 90s, 30m, 12h or 7d"
    ) { text in
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let unit = text.last.flatMap { units[$0] }
        guard let number = Int64(unit == nil ? text : String(text.dropLast())), number >= 0,
            number <= 3_650 * 86_400
        else { return nil }
        return .seconds(number * (unit ?? 1))
    }

    /// `hub policy ACTION [URL] …`.
    static func policy(_ arguments: [String], _ parsed: ParsedArguments) throws -> Int32 {
        guard let action = arguments.first else {
            throw UsageError(
                "hub policy needs an action: set, show, list, history, remove or group", command: "hub")
        }
        let (url, rest) = try hubURL(Array(arguments.dropFirst()))
        func expect(_ count: ClosedRange<Int>, _ usage: String) throws(UsageError) {
            guard count.contains(rest.count) else {
                throw UsageError("usage: settingsd hub policy \(usage)", command: "hub")
            }
        }
        let json = parsed.isSet(Options.json)
        switch action {
        case "set":
            try expect(2...2, "set [URL] NAME FILE --target TARGET")
            let bytes = try FileIO.read(rest[1], limit: 16 << 20)
            let document = try PolicyDocument(parsing: bytes, file: rest[1])
            let plan = try HubPolicyAdministration.set(
                url: url, name: rest[0], document: document, targets: parsed.values(target),
                dryRun: parsed.isSet(dryRun))
            print(plan, json: json)
        case "remove":
            try expect(1...1, "remove [URL] NAME")
            print(
                try HubPolicyAdministration.remove(url: url, name: rest[0], dryRun: parsed.isSet(dryRun)),
                json: json)
        case "show":
            try expect(1...1, "show [URL] NAME")
            guard let policy = try HubPolicyAdministration.policies(url: url, named: rest[0]).first else {
                throw SettingsError(.invalidValue, "the hub has no policy '\(rest[0])'")
            }
            if json {
                Output.line(self.json(policy).serialized())
            } else {
                Output.line(summary(policy))
                Output.line(policy.document.map { $0.text } ?? "")
            }
        case "list":
            try expect(0...0, "list [URL]")
            let policies = try HubPolicyAdministration.policies(url: url)
            if json {
                Output.line(JSONValue.array(policies.map(self.json)).serialized())
            } else if policies.isEmpty {
                Output.line("no policies")
            } else {
                for policy in policies { Output.line(summary(policy)) }
            }
        case "history":
            try expect(1...1, "history [URL] NAME")
            let revisions = try HubPolicyAdministration.history(url: url, name: rest[0])
            if json {
                Output.line(JSONValue.array(revisions.map(self.json)).serialized())
            } else {
                for revision in revisions { Output.line(summary(revision)) }
            }
        case "group":
            try expect(1...10_000, "group [URL] GROUP [MACHINE…]")
            let machines =
                rest.count == 1
                ? try HubPolicyAdministration.group(url: url, named: rest[0])
                : try HubPolicyAdministration.setGroup(
                    url: url, group: rest[0], machines: Array(rest.dropFirst()))
            if json {
                Output.line(JSONValue.array(machines.map(self.json)).serialized())
            } else {
                Output.line("machine group \(rest[0]): \(machines.count) machine(s)")
                for machine in machines { Output.line("  \(describe(machine))") }
            }
        default:
            throw UsageError(
                "hub policy has no action '\(action)' (set, show, list, history, remove or group)",
                command: "hub")
        }
        return 0
    }

    /// `hub report [URL] [POLICY]`.
    static func report(_ arguments: [String], _ parsed: ParsedArguments) throws -> Int32 {
        let (url, rest) = try hubURL(arguments)
        guard rest.count <= 1 else {
            throw UsageError("usage: settingsd hub report [URL] [POLICY]", command: "hub")
        }
        let report = try HubPolicyReport.make(
            url: url, policy: rest.first, unseenAfter: try parsed.value(unseenAfter) ?? .seconds(86_400))
        if parsed.isSet(Options.json) {
            Output.line(json(report).serialized())
            return 0
        }
        if report.summaries.isEmpty { Output.line("no policies") }
        for summary in report.summaries {
            let counts = HubPolicyReport.State.allCases.map { "\(summary.count($0)) \($0.rawValue)" }
            Output.line(
                "\(summary.policy.name) revision \(summary.policy.revision): \(counts.joined(separator: ", ")) (\(summary.rows.count) machine(s))"
            )
            guard rest.first != nil else { continue }
            for row in summary.rows {
                var line = "  \(describe(row.machine)): \(row.state.rawValue)"
                if let revision = row.revision { line += ", revision \(revision) applied" }
                if let appliedAt = row.appliedAt { line += " (since \(appliedAt))" }
                line += ", last seen \(row.machine.lastSeen)"
                Output.line(line)
                for refusal in row.refused {
                    Output.line(
                        "    refused \(refusal.key == "*" ? "the policy" : refusal.key): \(refusal.reason)")
                }
                if !row.overridden.isEmpty {
                    Output.line("    user overrode: \(row.overridden.joined(separator: ", "))")
                }
            }
        }
        return 0
    }

    /// The URL (the first argument when it looks like one, else `$SETTINGSD_HUB`) and the rest.
    private static func hubURL(_ arguments: [String]) throws(UsageError) -> (String, [String]) {
        if let first = arguments.first, first.contains("://") || first.contains("=") {
            return (first, Array(arguments.dropFirst()))
        }
        guard let url = SettingsPaths.hubFromEnvironment else {
            throw UsageError("the hub's URL is needed (or $SETTINGSD_HUB)", command: "hub")
        }
        return (url, arguments)
    }

    private static func print(_ plan: HubPolicyAdministration.Plan, json: Bool) {
        if json {
            Output.line(
                JSONValue.object([
                    "policy": .string(plan.policy), "revision": .integer(plan.revision),
                    "dryRun": .bool(plan.isDryRun),
                    "changes": .array(
                        plan.changes.map { change in
                            .object([
                                "key": .string(change.key), "before": change.before.map(self.json) ?? .null,
                                "after": change.after.map(self.json) ?? .null,
                            ])
                        }),
                    "machines": .array(plan.machines.map(self.json)),
                ]).serialized())
            return
        }
        let verb = plan.isDryRun ? "would write" : "wrote"
        Output.line(
            "\(verb) policy '\(plan.policy)' revision \(plan.revision)\(plan.removes ? " (removed)" : "")")
        Output.line("\(plan.changes.count) key(s) change:")
        for change in plan.changes {
            let before = change.before.map(describe) ?? "nothing"
            let after = change.after.map(describe) ?? "nothing"
            Output.line("  \(change.key): \(before) → \(after)")
        }
        Output.line("it reaches \(plan.machines.count) machine(s):")
        for machine in plan.machines { Output.line("  \(describe(machine))") }
    }

    private static func describe(_ setting: PolicyDocument.Entry) -> String {
        "\(setting.level.rawValue) \(Output.listed(setting.value))"
    }

    private static func describe(_ machine: HubPolicyAdministration.Machine) -> String {
        "\(machine.name.map { "\($0) (\(machine.replica))" } ?? machine.replica.description) in \(machine.namespace)"
    }

    private static func summary(_ policy: HubPolicyAdministration.Policy) -> String {
        let keys = policy.document.map { "\($0.keys.count) key(s)" } ?? "removed"
        return
            "\(policy.name) revision \(policy.revision): \(keys) for \(policy.targets.map(\.description).joined(separator: ", ")), written by \(policy.writtenBy) at \(policy.writtenAt)"
    }

    private static func json(_ setting: PolicyDocument.Entry) -> JSONValue {
        .object(["value": setting.value.json, "level": .string(setting.level.rawValue)])
    }

    private static func json(_ policy: HubPolicyAdministration.Policy) -> JSONValue {
        .object([
            "name": .string(policy.name), "revision": .integer(policy.revision),
            "document": policy.document?.json ?? .null,
            "targets": .array(policy.targets.map { .string($0.description) }),
            "writtenBy": .string(policy.writtenBy), "writtenAt": .string(policy.writtenAt),
        ])
    }

    private static func json(_ machine: HubPolicyAdministration.Machine) -> JSONValue {
        .object([
            "namespace": .string(machine.namespace), "replica": .string(machine.replica.description),
            "name": machine.name.map { .string($0) } ?? .null, "lastSeen": .string(machine.lastSeen),
        ])
    }

    private static func json(_ report: HubPolicyReport) -> JSONValue {
        .array(
            report.summaries.map { summary in
                var counts: [String: JSONValue] = [:]
                for state in HubPolicyReport.State.allCases {
                    counts[state.rawValue] = .integer(Int64(summary.count(state)))
                }
                return .object([
                    "policy": .string(summary.policy.name), "revision": .integer(summary.policy.revision),
                    "counts": .object(counts),
                    "machines": .array(
                        summary.rows.map { row in
                            .object([
                                "machine": json(row.machine), "state": .string(row.state.rawValue),
                                "revision": row.revision.map { .integer($0) } ?? .null,
                                "appliedAt": row.appliedAt.map { .string($0) } ?? .null,
                                "digest": row.digest.map { .string($0) } ?? .null,
                                "refused": .array(
                                    row.refused.map {
                                        .object(["key": .string($0.key), "reason": .string($0.reason)])
                                    }),
                                "overridden": .array(row.overridden.map { .string($0) }),
                            ])
                        }),
                ])
            })
    }
}
