import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settingsd hub init|status [URL]`, `hub policy …` and `hub report …`.
enum HubCommands {
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let all = try arguments.positionals(1...10_002)
        try refuseOptions(of: all, in: arguments)
        switch all[0] {
        case "policy": return try HubPolicyCommands.policy(Array(all.dropFirst()), arguments)
        case "report": return try HubPolicyCommands.report(Array(all.dropFirst()), arguments)
        default: break
        }
        let positionals = try arguments.positionals(1...2)
        guard let url = positionals.count == 2 ? positionals[1] : SettingsPaths.hubFromEnvironment else {
            throw UsageError("hub \(positionals[0]) needs a URL (or $SETTINGSD_HUB)", command: "hub")
        }
        switch positionals[0] {
        case "init":
            let rate = try arguments.value(Options.pollRate).map(Int64.init)
            let (before, after) = try HubAdministration.initialize(url: url, pollRate: rate)
            // What was done is the command's output, as any command's result is.
            Output.line(
                before == after
                    ? "the hub schema is already at version \(after)"
                    : "the hub schema is now at version \(after) (was \(before == 0 ? "none" : String(before)))"
            )
            if let rate { Output.line("the hub's poll rate is now \(rate) polls a second a namespace") }
            return 0
        case "status":
            let report = try HubAdministration.report(url: url)
            if arguments.isSet(Options.json) {
                Output.line(json(report).serialized())
            } else {
                print(report)
            }
            return 0
        case let action:
            throw UsageError("hub has no action '\(action)' (init, status, policy or report)", command: "hub")
        }
    }

    /// Refuses an option the action does not take, rather than ignore it.
    private static func refuseOptions(of positionals: [String], in arguments: ParsedArguments) throws {
        let action = positionals[0]
        let sub = action == "policy" ? positionals.dropFirst().first ?? "" : ""
        let given: [(name: String, isGiven: Bool, takenBy: Bool)] = [
            ("--poll-rate", try arguments.value(Options.pollRate) != nil, action == "init"),
            (
                "--target", !arguments.values(HubPolicyCommands.target).isEmpty,
                action == "policy" && sub == "set"
            ),
            (
                "--dry-run", arguments.isSet(HubPolicyCommands.dryRun),
                action == "policy" && (sub == "set" || sub == "remove")
            ),
            ("--unseen-after", try arguments.value(HubPolicyCommands.unseenAfter) != nil, action == "report"),
        ]
        if let wrong = given.first(where: { $0.isGiven && !$0.takenBy }) {
            throw UsageError(
                "\(wrong.name) is not for hub \(action)\(sub.isEmpty ? "" : " \(sub)")", command: "hub")
        }
    }

    private static func print(_ report: HubAdministration.Report) {
        Output.line("hub: \(report.address)")
        Output.line("role: \(report.role)")
        Output.line("schema: version \(report.schemaVersion)")
        Output.line(
            "poll rate: \(report.pollRate) polls a second a namespace (a namespace of N machines polls every N/\(report.pollRate) s, 5 s at least)"
        )
        if report.namespaces.isEmpty { Output.line("namespaces: none visible to this role") }
        for namespace in report.namespaces {
            Output.line(
                "namespace \(namespace.name): \(namespace.keys) key(s), hub sequence \(namespace.lastSequence)"
            )
        }
        for replica in report.replicas {
            Output.line(
                "replica \(replica.name.map { "\($0) (\(replica.replica))" } ?? replica.replica.description) in \(replica.namespace): pushed through \(replica.pushedThrough), last seen \(replica.lastSeen)"
            )
        }
    }

    private static func json(_ report: HubAdministration.Report) -> JSONValue {
        .object([
            "address": .string(report.address), "role": .string(report.role),
            "schemaVersion": .integer(report.schemaVersion), "pollRate": .integer(report.pollRate),
            "namespaces": .array(
                report.namespaces.map {
                    .object([
                        "name": .string($0.name), "keys": .integer(Int64($0.keys)),
                        "lastSequence": .integer($0.lastSequence),
                    ])
                }),
            "replicas": .array(
                report.replicas.map {
                    .object([
                        "namespace": .string($0.namespace), "replica": .string($0.replica.description),
                        "name": $0.name.map { .string($0) } ?? .null,
                        "pushedThrough": .integer($0.pushedThrough), "lastSeen": .string($0.lastSeen),
                    ])
                }),
        ])
    }
}
