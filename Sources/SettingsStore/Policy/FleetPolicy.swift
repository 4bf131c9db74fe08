/// The hub's policies in force on a replica, composed: per key the one value that wins, and the
/// keys refused (see `docs/POLICY.md`).
///
/// For each key, the winner is the first by level (mandatory before recommended), then by
/// target (a machine before a machine group before a group), then by policy name. A key the
/// schema in force refuses (a type, a range, strict schemas) is refused and reported, and the
/// rest of its policy applies.
public struct FleetPolicy: Sendable, Equatable {
    /// The winning setting of one key.
    public struct Entry: Sendable, Equatable {
        /// The value.
        public var value: SettingValue
        /// Mandatory or recommended.
        public var level: PolicyDocument.Level
        /// The policy it comes from.
        public var policy: String
        /// That policy's revision.
        public var revision: Int64
    }

    /// A key of a policy that was not applied, and why.
    public struct Refusal: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The policy that set it.
        public var policy: String
        /// Why (the schema's refusal).
        public var reason: String

        /// A refusal of `key` of `policy` for `reason` (`*`: the whole policy).
        public init(key: String, policy: String, reason: String) {
            self.key = key
            self.policy = policy
            self.reason = reason
        }
    }

    /// The assignments in force, by where they came from (a hub link's address).
    public private(set) var sources: [String: [PolicyAssignment]] = [:]
    /// The winning setting per key.
    public private(set) var settings: [String: Entry] = [:]
    /// The keys refused, by key then policy.
    public private(set) var refusals: [Refusal] = []

    /// No policy.
    public init() {}

    /// Composes `sources` under `schema` (strict when `isStrict`).
    package init(sources: [String: [PolicyAssignment]], schema: SettingsSchema, isStrict: Bool) {
        self.sources = sources.filter { !$0.value.isEmpty }
        var candidates: [String: (setting: Entry, rank: (Int, Int, String))] = [:]
        for assignment in self.sources.values.joined() {
            for (key, entry) in assignment.document.keys {
                if let reason = Self.refusal(of: entry.value, forKey: key, schema: schema, isStrict: isStrict)
                {
                    refusals.append(Refusal(key: key, policy: assignment.name, reason: reason))
                    continue
                }
                let rank = (
                    entry.level == .mandatory ? 0 : 1, assignment.target.specificity, assignment.name
                )
                if let held = candidates[key], held.rank <= rank { continue }
                candidates[key] = (
                    Entry(
                        value: entry.value, level: entry.level, policy: assignment.name,
                        revision: assignment.revision), rank
                )
            }
        }
        settings = candidates.mapValues(\.setting)
        refusals.sort { ($0.key, $0.policy) < ($1.key, $1.policy) }
    }

    /// The same sources composed under another schema.
    package func recomposed(schema: SettingsSchema, isStrict: Bool) -> FleetPolicy {
        FleetPolicy(sources: sources, schema: schema, isStrict: isStrict)
    }

    /// These policies with `source`'s assignments replaced by `assignments`.
    package func replacing(
        _ source: String, with assignments: [PolicyAssignment], schema: SettingsSchema, isStrict: Bool
    ) -> FleetPolicy {
        var sources = sources
        sources[source] = assignments
        return FleetPolicy(sources: sources, schema: schema, isStrict: isStrict)
    }

    /// Whether no policy sets any key.
    public var isEmpty: Bool { settings.isEmpty }

    /// The mandatory setting of `key`, if a policy locks it.
    public func mandatory(forKey key: String) -> Entry? {
        settings[key].flatMap { $0.level == .mandatory ? $0 : nil }
    }

    /// The recommended setting of `key`, if a policy recommends one.
    public func recommended(forKey key: String) -> Entry? {
        settings[key].flatMap { $0.level == .recommended ? $0 : nil }
    }

    /// The revisions in force, by policy name (the highest where two sources name one policy).
    public var revisions: [String: Int64] {
        sources.values.joined().reduce(into: [:]) { revisions, assignment in
            revisions[assignment.name] = max(revisions[assignment.name] ?? 0, assignment.revision)
        }
    }

    /// A digest of what the policies make effective (16 hexadecimal digits): two machines with
    /// the same digest apply the same values at the same levels.
    public var digest: String {
        let text = JSONValue.object(
            settings.mapValues { .object(["value": $0.value.json, "level": .string($0.level.rawValue)]) }
        ).serialized()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Why the schema refuses `value` for `key` from a policy, or nil.
    private static func refusal(
        of value: SettingValue, forKey key: String, schema: SettingsSchema, isStrict: Bool
    ) -> String? {
        guard let rule = schema.rule(forKey: key) else {
            return isStrict ? "'\(key)' is not declared by any schema, and schemas are strict" : nil
        }
        do throws(SettingsError) {
            try rule.check(value, forKey: key)
            return nil
        } catch {
            return error.message
        }
    }
}
