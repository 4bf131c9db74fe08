internal import CLibPQ

/// Connection strings as shown to people: every option but the password.
enum PostgresConnectionString {
    /// `conninfo` (a key=value string or `postgresql://` URI) as `key=value` pairs without the
    /// password; a string libpq cannot parse shows as `<unparsable connection string>`.
    static func redacted(_ conninfo: String) -> String {
        guard let options = PQconninfoParse(conninfo, nil) else { return "<unparsable connection string>" }
        defer { PQconninfoFree(options) }
        var parts: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val, name != "password" {
                parts.append("\(name)=\(String(cString: value))")
            }
            option += 1
        }
        return parts.isEmpty ? "(libpq defaults)" : parts.joined(separator: " ")
    }

    /// Whether libpq can parse `conninfo`; the reason when it cannot.
    static func check(_ conninfo: String) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &message) else {
            defer { if let message { PQfreemem(message) } }
            let text = message.map { String(cString: $0) } ?? "cannot be parsed"
            return text.split(separator: "\n").first.map(String.init) ?? text
        }
        PQconninfoFree(options)
        return nil
    }
}
