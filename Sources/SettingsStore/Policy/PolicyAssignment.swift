/// A fleet policy as the hub assigns it to one machine: its name, revision, the target that
/// reaches the machine, and what it says.
public struct PolicyAssignment: Sendable, Equatable {
    /// Whom a policy is for. Machines are more specific than machine groups, which are more
    /// specific than groups: the more specific target's policy wins at the same level.
    public enum Target: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// One machine (a replica), by id.
        case machine(ReplicaID)
        /// A machine group the hub's administrators keep (`settingsd hub policy group`).
        case machineGroup(String)
        /// Every machine of every namespace (role) that is a member of this PostgreSQL role.
        case group(String)

        /// How specific the target is: 0 for a machine, 1 for a machine group, 2 for a group.
        public var specificity: Int {
            switch self {
            case .machine: 0
            case .machineGroup: 1
            case .group: 2
            }
        }

        /// The text form: `machine:ID`, `machine-group:NAME` or `group:ROLE`.
        public var description: String {
            switch self {
            case .machine(let replica): "machine:\(replica)"
            case .machineGroup(let name): "machine-group:\(name)"
            case .group(let role): "group:\(role)"
            }
        }

        /// Reads the text form; a bare name is a group (a role).
        ///
        /// - Throws: `invalidValue` for an empty name, a machine that is not a replica id, or a
        ///   name longer than 63 bytes (PostgreSQL's longest role name).
        public init(parsing text: String) throws(SettingsError) {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let kind = parts.count == 2 ? String(parts[0]) : "group"
            let name = parts.count == 2 ? String(parts[1]) : text
            guard !name.isEmpty, name.utf8.count <= 63, !name.contains(where: { $0.isNewline || $0 == "\0" })
            else {
                throw SettingsError(
                    .invalidValue, "policy target '\(text)': a name of 1 to 63 bytes on one line is needed")
            }
            switch kind {
            case "group": self = .group(name)
            case "machine-group": self = .machineGroup(name)
            case "machine":
                guard let replica = ReplicaID(name) else {
                    throw SettingsError(
                        .invalidValue,
                        "policy target '\(text)': a machine is named by its replica id (a UUID, as status shows it)"
                    )
                }
                self = .machine(replica)
            default:
                throw SettingsError(
                    .invalidValue,
                    "policy target '\(text)': a target is group:ROLE, machine-group:NAME or machine:ID")
            }
        }

        /// Most specific first, then by text.
        public static func < (lhs: Target, rhs: Target) -> Bool {
            (lhs.specificity, lhs.description) < (rhs.specificity, rhs.description)
        }
    }

    /// The policy's name.
    public var name: String
    /// Its revision: 1 for the first, one more at every change.
    public var revision: Int64
    /// The most specific of its targets that reaches this machine.
    public var target: Target
    /// What it says.
    public var document: PolicyDocument

    /// An assignment of `document`, revision `revision` of policy `name`, through `target`.
    public init(name: String, revision: Int64, target: Target, document: PolicyDocument) {
        self.name = name
        self.revision = revision
        self.target = target
        self.document = document
    }
}

extension PolicyAssignment {
    /// The JSON form a replica caches (`name`, `revision`, `target`, `document`).
    package var json: JSONValue {
        .object([
            "name": .string(name), "revision": .integer(revision), "target": .string(target.description),
            "document": document.json,
        ])
    }

    /// Reads the JSON form.
    package init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "a policy assignment")
        name = try fields.string("name")
        revision = try fields.integer("revision")
        target = try Target(parsing: try fields.string("target"))
        guard let document = fields.members["document"] else {
            throw SettingsError(.invalidValue, "policy '\(name)': its document is missing")
        }
        self.document = try PolicyDocument(json: document)
    }
}
