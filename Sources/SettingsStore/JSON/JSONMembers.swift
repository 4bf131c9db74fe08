/// Where `JSONCursor.object(depth:into:)` puts an object's members.
protocol JSONMemberSink {
    /// Adds a member; returns false, adding nothing, when `name` is already there.
    mutating func insert(_ value: JSONValue, forName name: String) -> Bool
}

extension Dictionary: JSONMemberSink where Key == String, Value == JSONValue {
    mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
        updateValue(value, forKey: name) == nil
    }
}

/// The members of a JSON object, looked up by name: the dictionary of a parsed `JSONValue.object`,
/// or a list in text order for an object read straight from a frame, which spares a request its
/// hash table (a request has a handful of members).
struct JSONMembers {
    /// Members in text order, with the check for a repeated name a JSON object needs.
    struct List: JSONMemberSink {
        fileprivate var entries: [(name: String, value: JSONValue)] = []
        /// The names, once there are too many to compare one by one.
        private var names: Set<String>?
        /// Past this many members, repeated names are found by hashing.
        private static let linearLimit = 16

        init() {
            entries.reserveCapacity(4)
        }

        mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
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
    }

    private enum Storage {
        case dictionary([String: JSONValue])
        case list([(name: String, value: JSONValue)])
    }

    private let storage: Storage

    /// The members of an object value.
    init(_ dictionary: [String: JSONValue]) {
        storage = .dictionary(dictionary)
    }

    /// Members read from text.
    init(_ list: List) {
        storage = .list(list.entries)
    }

    /// The member called `name`, or nil.
    subscript(name: String) -> JSONValue? {
        switch storage {
        case .dictionary(let members): members[name]
        case .list(let entries): entries.first(where: { $0.name == name })?.value
        }
    }
}
