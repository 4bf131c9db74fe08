internal import CLibPQ

/// Connection strings as shown to people: every option but the password.
enum PostgresConnectionString {
    /// `conninfo` (a key=value string or `postgresql://` URI) as `key=value` pairs without the
    /// password; a string libpq cannot parse shows as `<unparsable connection string>`.
    static func redacted(_ conninfo: String) -> String {
        guard let pq = try? LibPQ.functions() else { return "<libpq not installed>" }
        guard let options = pq.conninfoParse(conninfo, nil) else { return "<unparsable connection string>" }
        defer { pq.conninfoFree(options) }
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
        let pq: CSettingsLibPQ
        do throws(SettingsError) { pq = try LibPQ.functions() } catch { return error.message }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(conninfo, &message) else {
            defer { if let message { pq.freemem(message) } }
            let text = message.map { String(cString: $0) } ?? "cannot be parsed"
            return text.split(separator: "\n").first.map(String.init) ?? text
        }
        pq.conninfoFree(options)
        return nil
    }
}
