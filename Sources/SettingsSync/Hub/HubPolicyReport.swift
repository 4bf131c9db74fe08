package import SettingsStore
import SettingsWire

/// `settingsd hub report`: for each policy, every machine it reaches and what that machine
/// reported, summarised as applied / failed / pending / not seen.
package struct HubPolicyReport: Sendable, Equatable {
    /// Where a machine stands with one policy.
    package enum State: String, Sendable, CaseIterable {
        /// It applied the current revision, every key of it.
        case applied
        /// It applied the current revision, but refused keys of it (or could not read it).
        case failed
        /// It has not reported the current revision yet, and was seen lately.
        case pending
        /// It has not reported the current revision, and was not seen for longer than asked.
        case notSeen = "not seen"
    }

    /// One machine and one policy.
    package struct Row: Sendable, Equatable {
        package var machine: HubPolicyAdministration.Machine
        package var state: State
        /// The revision it reported applying (nil: none).
        package var revision: Int64?
        /// When what it applies last changed, as PostgreSQL prints it (nil: it never reported).
        package var appliedAt: String?
        /// Its digest of the effective policy.
        package var digest: String?
        /// This policy's keys it refused.
        package var refused: [FleetPolicy.Refusal]
        /// This policy's recommended keys its user overrode.
        package var overridden: [String]
    }

    /// One policy's rows.
    package struct Summary: Sendable, Equatable {
        package var policy: HubPolicyAdministration.Policy
        package var rows: [Row]

        /// How many machines are in each state.
        package func count(_ state: State) -> Int { rows.filter { $0.state == state }.count }
    }

    /// The summaries, by policy name.
    package var summaries: [Summary]

    /// What the machines of every policy (or only `policy`) reported; a machine neither heard of
    /// for longer than `unseenAfter` nor reporting the current revision is `not seen`.
    package static func make(url: String, policy: String?, unseenAfter: Duration) throws(SettingsError)
        -> HubPolicyReport
    {
        let connection = try HubPolicyAdministration.administratorConnection(url)
        let policies = try HubPolicyAdministration.policies(on: connection, named: policy)
        if let policy, policies.isEmpty {
            throw SettingsError(.invalidValue, "the hub has no policy '\(policy)'")
        }
        let reports = try Self.reports(on: connection)
        let unseen = Double(unseenAfter.components.seconds)
        return HubPolicyReport(
            summaries: try policies.map { (policy) throws(SettingsError) in
                let machines = try HubPolicyAdministration.machinesReached(
                    by: policy.targets.map(\.description), on: connection)
                return Summary(
                    policy: policy,
                    rows: machines.map { machine in
                        row(for: machine, policy: policy, report: reports[Key(machine)], unseenAfter: unseen)
                    })
            })
    }

    /// A machine's report as the hub holds it: hub input, read leniently.
    private struct Report {
        var revisions: [String: Int64]
        var digest: String
        var refused: [FleetPolicy.Refusal]
        var overridden: [String: [String]]
        var appliedAt: String
    }

    private struct Key: Hashable {
        var namespace: String
        var replica: ReplicaID

        init(namespace: String, replica: ReplicaID) {
            self.namespace = namespace
            self.replica = replica
        }

        init(_ machine: HubPolicyAdministration.Machine) {
            self.init(namespace: machine.namespace, replica: machine.replica)
        }
    }

    private static func row(
        for machine: HubPolicyAdministration.Machine, policy: HubPolicyAdministration.Policy, report: Report?,
        unseenAfter: Double
    ) -> Row {
        let revision = report?.revisions[policy.name]
        let refused = report?.refused.filter { $0.policy == policy.name } ?? []
        let state: State =
            if revision == policy.revision {
                refused.isEmpty ? .applied : .failed
            } else if machine.secondsSinceSeen > unseenAfter {
                .notSeen
            } else {
                .pending
            }
        return Row(
            machine: machine, state: state, revision: revision, appliedAt: report?.appliedAt,
            digest: report?.digest, refused: refused, overridden: report?.overridden[policy.name] ?? [])
    }

    private static func reports(on connection: PostgresConnection) throws(SettingsError) -> [Key: Report] {
        let rows = try connection.execute(
            "SELECT namespace::text, replica, revisions, digest, refused, overridden, applied_at::text FROM settingsd.policy_reports"
        )
        var reports: [Key: Report] = [:]
        for row in 0..<rows.count {
            guard let replica = ReplicaID(bytes: rows.bytes(row, 1)) else { continue }
            var report = Report(
                revisions: [:], digest: rows.text(row, 3), refused: [], overridden: [:],
                appliedAt: rows.text(row, 6))
            if case .object(let revisions)? = try? JSONValue.parse(rows.text(row, 2)) {
                for case (let name, .integer(let revision)) in revisions { report.revisions[name] = revision }
            }
            if case .array(let refused)? = try? JSONValue.parse(rows.text(row, 4)) {
                for item in refused {
                    guard let fields = try? JSONFields(item, what: "a refusal"),
                        let key = try? fields.string("key"), let policy = try? fields.string("policy"),
                        let reason = try? fields.string("reason")
                    else { continue }
                    report.refused.append(FleetPolicy.Refusal(key: key, policy: policy, reason: reason))
                }
            }
            if case .object(let overridden)? = try? JSONValue.parse(rows.text(row, 5)) {
                for case (let name, .array(let keys)) in overridden {
                    report.overridden[name] = keys.compactMap {
                        if case .string(let key) = $0 { key } else { nil }
                    }
                }
            }
            reports[Key(namespace: rows.text(row, 0), replica: replica)] = report
        }
        return reports
    }
}
