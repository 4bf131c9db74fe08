import SettingsStore

/// A daemon frame's members as they are read: the envelope (`id`, `ok`) set apart, the rest as
/// the answer's fields, kept in a list as parsed (see `WireAnswer`).
struct WireEnvelope: JSONMemberSink {
    /// The `id` member, of whatever type it came as.
    private(set) var id: JSONValue?
    /// The `ok` member, of whatever type it came as.
    private(set) var ok: JSONValue?
    /// Whether an `event` member came: the frame is a change event, not a response.
    private(set) var isEvent = false
    /// The other members read from text.
    private var list = JSONMembers.List()
    /// The other members of an object already parsed.
    private var dictionary: [String: JSONValue]?

    /// An envelope to parse into.
    package init() {}

    /// The envelope of an object already parsed.
    package init(_ members: [String: JSONValue]) {
        var rest = members
        id = rest.removeValue(forKey: "id")
        ok = rest.removeValue(forKey: "ok")
        isEvent = rest["event"] != nil
        dictionary = rest
    }

    /// Every member but `id` and `ok`.
    var fields: JSONMembers {
        dictionary.map(JSONMembers.init) ?? JSONMembers(list)
    }

    mutating func insert(_ value: JSONValue, forName name: String) -> Bool {
        switch name {
        case "id":
            guard id == nil else { return false }
            id = value
        case "ok":
            guard ok == nil else { return false }
            ok = value
        default:
            if name == "event" { isEvent = true }
            return list.insert(value, forName: name)
        }
        return true
    }
}
