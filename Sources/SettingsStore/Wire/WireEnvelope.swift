/// A daemon frame's members as they are read: the envelope (`id`, `ok`) set apart, the rest as
/// the result's fields, so reading a response builds one dictionary, the one a client returns.
struct WireEnvelope: JSONMemberSink {
    /// The `id` member, of whatever type it came as.
    private(set) var id: JSONValue?
    /// The `ok` member, of whatever type it came as.
    private(set) var ok: JSONValue?
    /// Every other member.
    private(set) var fields: [String: JSONValue]
    /// Whether an `event` member came: the frame is a change event, not a response.
    private(set) var isEvent = false

    /// An envelope to parse into.
    init() {
        // Room for a typical result (`found` and `value`), so reading one never regrows the table;
        // made at that size, not reserved in an empty one (which resized: ~15 ns per answer).
        fields = Dictionary(minimumCapacity: 4)
    }

    /// The envelope of an object already parsed.
    init(_ members: [String: JSONValue]) {
        fields = members
        id = fields.removeValue(forKey: "id")
        ok = fields.removeValue(forKey: "ok")
        isEvent = fields["event"] != nil
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
            return fields.updateValue(value, forKey: name) == nil
        }
        return true
    }
}
