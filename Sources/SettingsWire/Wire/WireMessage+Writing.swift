package import SettingsStore

/// Responses written straight into an outbound buffer: the same text `success(id:_:)` serializes
/// to, without the dictionary it builds (the fields plus `id` and `ok`) or, for a `get`, any
/// dictionary at all.
extension WireMessage {
    /// The fields that answer a `get`: whether the key has a value, the value, and the version
    /// of the key's stored value when it holds one (what a compare-and-set compares).
    package static func valueFields(_ value: SettingValue?, version: SettingVersion?) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["found": .bool(value != nil)]
        fields["value"] = value?.json
        fields["version"] = version.map { .string($0.description) }
        return fields
    }

    /// Appends the text of `success(id: id, valueFields(value, version: version))`.
    package static func writeValue(
        id: Int64?, _ value: SettingValue?, version: SettingVersion?, to bytes: inout [UInt8]
    ) {
        bytes.append(contentsOf: (value == nil ? #"{"found":false,"id":"# : #"{"found":true,"id":"#).utf8)
        write(id: id, to: &bytes)
        bytes.append(contentsOf: #","ok":true"#.utf8)
        if let value {
            bytes.append(contentsOf: #","value":"#.utf8)
            value.json.write(to: &bytes)
        }
        if let version {
            bytes.append(contentsOf: #","version":"#.utf8)
            JSONValue.write(string: version.description, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends the text of `success(id: id, result)`.
    package static func writeSuccess(id: Int64?, _ result: [String: JSONValue], to bytes: inout [UInt8]) {
        var members = result.filter { $0.key != "id" && $0.key != "ok" }.map { ($0.key, Optional($0.value)) }
        // `nil` stands for the id, written without a JSONValue.
        members.append(("id", nil))
        members.append(("ok", .bool(true)))
        members.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        bytes.append(UInt8(ascii: "{"))
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.write(string: name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let value { value.write(to: &bytes) } else { write(id: id, to: &bytes) }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static func write(id: Int64?, to bytes: inout [UInt8]) {
        guard let id else { return bytes.append(contentsOf: "null".utf8) }
        JSONValue.write(integer: id, to: &bytes)
    }
}
