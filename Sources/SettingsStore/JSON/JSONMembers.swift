/// Where `JSONCursor.object(depth:into:)` puts an object's members.
package protocol JSONMemberSink {
    /// Adds a member; returns false, adding nothing, when `name` is already there.
    mutating func insert(_ value: JSONValue, forName name: String) -> Bool

    /// Reads the value of the member `name` itself, from `cursor` at its first byte, where the
    /// object is at `depth`; returns false, reading nothing, to have it parsed and `insert`ed.
    /// A sink that knows a member's shape (a batch's entries) so skips the `JSONValue` tree.
    mutating func readMember(named name: String, from cursor: inout JSONCursor, depth: Int)
        throws(SettingsError) -> Bool
}

extension JSONMemberSink {
    package mutating func readMember(named name: String, from cursor: inout JSONCursor, depth: Int)
        throws(SettingsError) -> Bool
    { false }
}

extension Dictionary: JSONMemberSink where Key == String, Value == JSONValue {
    package mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
        updateValue(value, forKey: name) == nil
    }
}

/// The members of a JSON object, looked up by name: the dictionary of a parsed `JSONValue.object`,
/// or a `List` for an object read straight from a frame, which spares a request or an answer its
/// hash table (either has a handful of members).
package struct JSONMembers: Sendable {
    /// Members read from text, with the check for a repeated name a JSON object needs. `id`,
    /// `op` and `key`, which requests carry, have slots of their own, so reading a `get` or a
    /// `delete` allocates nothing for its members.
    package struct List: JSONMemberSink, Sendable {
        private var id: JSONValue?
        private var op: JSONValue?
        private var key: JSONValue?
        /// The other members, in text order.
        private var entries: [(name: String, value: JSONValue)] = []
        /// The other members' names, once there are too many to compare one by one.
        private var names: Set<String>?
        /// Past this many other members, repeated names are found by hashing.
        private static let linearLimit = 16

        package init() {}

        package mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
            switch name {
            case "id": return Self.fill(&id, with: value)
            case "op": return Self.fill(&op, with: value)
            case "key": return Self.fill(&key, with: value)
            default: break
            }
            if names != nil {
                guard names?.insert(name).inserted == true else { return false }
            } else if entries.count < Self.linearLimit {
                guard !entries.contains(where: { $0.name == name }) else { return false }
            } else {
                var all = Set(entries.map(\.name))
                guard all.insert(name).inserted else { return false }
                names = all
            }
            entries.append((name, value))
            return true
        }

        private static func fill(_ slot: inout JSONValue?, with value: JSONValue) -> Bool {
            guard slot == nil else { return false }
            slot = value
            return true
        }

        /// The member called `name`, or nil.
        subscript(name: String) -> JSONValue? {
            switch name {
            case "id": id
            case "op": op
            case "key": key
            default: entries.first(where: { $0.name == name })?.value
            }
        }

        /// Every member, by name.
        var dictionary: [String: JSONValue] {
            var members = [String: JSONValue](minimumCapacity: entries.count + 3)
            for (name, value) in entries { members[name] = value }
            members["id"] = id
            members["op"] = op
            members["key"] = key
            return members
        }
    }

    private enum Storage {
        case dictionary([String: JSONValue])
        case list(List)
    }

    private let storage: Storage

    /// The members of an object value.
    package init(_ dictionary: [String: JSONValue]) {
        storage = .dictionary(dictionary)
    }

    /// Members read from text.
    package init(_ list: List) {
        storage = .list(list)
    }

    /// The member called `name`, or nil.
    package subscript(name: String) -> JSONValue? {
        switch storage {
        case .dictionary(let members): members[name]
        case .list(let list): list[name]
        }
    }

    /// Every member, by name.
    package var dictionary: [String: JSONValue] {
        switch storage {
        case .dictionary(let members): members
        case .list(let list): list.dictionary
        }
    }
}
