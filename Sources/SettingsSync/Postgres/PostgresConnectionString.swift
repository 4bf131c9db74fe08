internal import CLibPQ
import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Connection strings as shown to people: every option but the secret ones.
package enum PostgresConnectionString {
    /// `conninfo` (a key=value string or `postgresql://` URI) as `key=value` pairs without the
    /// options libpq marks secret (`password`, `sslpassword`: `dispchar` `*`); a string libpq
    /// cannot parse shows as `<unparsable connection string>`.
    static func redacted(_ conninfo: String) -> String {
        guard let pq = try? LibPQ.functions() else { return "<libpq not installed>" }
        guard let options = pq.conninfoParse(conninfo, nil) else { return "<unparsable connection string>" }
        defer { pq.conninfoFree(options) }
        var parts: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            let isSecret = option.pointee.dispchar.map { $0.pointee == CChar(UInt8(ascii: "*")) } ?? false
            if let value = option.pointee.val, !isSecret, name != "password" {
                parts.append("\(name)=\(String(cString: value))")
            }
            option += 1
        }
        return parts.isEmpty ? "(libpq defaults)" : parts.joined(separator: " ")
    }

    /// The role libpq logs in as with `conninfo`, as libpq chooses it: the string's `user`, else
    /// `$PGUSER`, else the name of the process's user. Nil when a service file may name it
    /// (`service` in the string, or `$PGSERVICE`), or the string does not parse.
    package static func loginRole(_ conninfo: String) -> String? {
        guard let values = options(of: conninfo) else { return nil }
        if let user = values["user"], !user.isEmpty { return user }
        if values["service"] != nil { return nil }
        if let service = getenv("PGSERVICE"), service.pointee != 0 { return nil }
        if let user = getenv("PGUSER"), user.pointee != 0 { return String(cString: user) }
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// The keywords `conninfo` sets, with their values, as libpq parses it; nil when it cannot.
    private static func options(of conninfo: String) -> [String: String]? {
        guard let pq = try? LibPQ.functions(), let options = pq.conninfoParse(conninfo, nil) else {
            return nil
        }
        defer { pq.conninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return values
    }

    /// Whether libpq can parse `conninfo`; the reason when it cannot, with every quoted part of
    /// libpq's message left out (it quotes the text it could not read, which can hold the
    /// password: `invalid percent-encoded token: "alice%ZZpw"`).
    static func check(_ conninfo: String) -> String? {
        let pq: CSettingsLibPQ
        do throws(SettingsError) { pq = try LibPQ.functions() } catch { return error.message }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = pq.conninfoParse(conninfo, &message) else {
            defer { if let message { pq.freemem(message) } }
            let text = message.map { String(cString: $0) } ?? "cannot be parsed"
            return withoutQuotedParts(text.split(separator: "\n").first.map(String.init) ?? text)
        }
        pq.conninfoFree(options)
        return nil
    }

    /// `text` with every part in double quotes replaced by `"…"`.
    static func withoutQuotedParts(_ text: String) -> String {
        var result = ""
        var isQuoted = false
        for character in text {
            if character == "\"" {
                result += isQuoted ? "…\"" : "\""
                isQuoted.toggle()
            } else if !isQuoted {
                result.append(character)
            }
        }
        return isQuoted ? result + "…\"" : result
    }

    /// A warning when `conninfo` reaches a server over TCP without verifying it: nil for Unix
    /// sockets (libpq uses no TLS there) and for `sslmode=verify-full`. `sslmode` nil means the
    /// hub link's default, `require` (encrypted, the server not verified).
    static func transportWarning(_ conninfo: String) -> String? {
        guard let values = options(of: conninfo) else { return nil }
        let hosts = (values["host"] ?? "").split(separator: ",")
        let isTCP = values["hostaddr"] != nil || hosts.contains { !$0.hasPrefix("/") && !$0.hasPrefix("@") }
        let mode = values["sslmode"] ?? "require"
        guard isTCP, mode != "verify-full" else { return nil }
        if ["disable", "allow", "prefer"].contains(mode) {
            return
                "the hub is reached over TCP with sslmode=\(mode): settings and credentials may travel in plaintext; use sslmode=verify-full with sslrootcert (see the README)"
        }
        return
            "the hub is reached over TCP with sslmode=\(mode): encrypted, but the server is not verified, so a machine in the middle can pose as it; use sslmode=verify-full with sslrootcert (see the README)"
    }
}
