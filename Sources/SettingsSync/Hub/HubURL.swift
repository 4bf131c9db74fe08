package import SettingsStore
import SettingsWire

/// A hub URL split into what libpq reads and the `settingsd_`-prefixed options only settingsd
/// reads (libpq refuses keywords it does not know): `?settingsd_pool=transaction` in a
/// `postgresql://` URI, `settingsd_pool=transaction` in a `key=value` string.
package struct HubURL: Equatable {
    /// The connection string for libpq: the original with every `settingsd_` option left out.
    let conninfo: String
    /// The `settingsd_` options by name (without the prefix), their values decoded.
    let options: [String: String]

    private static let prefix = "settingsd_"

    package init(_ url: String) {
        if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") {
            (conninfo, options) = Self.splitURI(url)
        } else {
            (conninfo, options) = Self.splitKeywords(url)
        }
    }

    /// `conninfo`, or why libpq cannot read it.
    package func checkedConninfo() throws(SettingsError) -> String {
        if let problem = PostgresConnectionString.check(conninfo) {
            throw SettingsError(.invalidValue, "the hub URL cannot be parsed: \(problem)")
        }
        return conninfo
    }

    /// The pooling the options ask for, the configuration's when they are silent.
    func pooling(default configured: HubPooling) throws(SettingsError) -> HubPooling {
        guard let text = options["pool"] else { return configured }
        guard let pooling = HubPooling(rawValue: text) else {
            throw SettingsError(
                .invalidValue,
                "the hub URL's settingsd_pool is '\(text)': it must be one of "
                    + HubPooling.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return pooling
    }

    /// The poll interval the options ask for (`settingsd_poll_min`, `settingsd_poll_max`, in
    /// seconds), the configuration's where they are silent.
    func pollInterval(default configured: ClosedRange<Duration>) throws(SettingsError) -> ClosedRange<
        Duration
    > {
        let lower = try duration("poll_min") ?? configured.lowerBound
        let upper = try duration("poll_max") ?? max(configured.upperBound, lower)
        guard lower <= upper else {
            throw SettingsError(
                .invalidValue,
                "the hub URL's settingsd_poll_min (\(lower.seconds) s) is over settingsd_poll_max (\(upper.seconds) s)"
            )
        }
        return lower...upper
    }

    /// Whether `settingsd_seal=off` marks the namespace plain: its entries are not sealed even
    /// when this machine holds a sync key (`on`, the default, seals them when it does).
    func marksPlain() throws(SettingsError) -> Bool {
        switch options["seal"] {
        case nil, "on": return false
        case "off": return true
        case let text?:
            throw SettingsError(
                .invalidValue, "the hub URL's settingsd_seal is '\(text)': it must be on or off")
        }
    }

    private func duration(_ name: String) throws(SettingsError) -> Duration? {
        guard let text = options[name] else { return nil }
        guard let value = Double(text), value.isFinite, value >= 0.01, value <= 3_600 else {
            throw SettingsError(
                .invalidValue,
                "the hub URL's settingsd_\(name) is '\(text)': it must be seconds from 0.01 to 3600")
        }
        return .milliseconds(Int64((value * 1_000).rounded()))
    }

    /// `scheme://…?a=1&settingsd_pool=transaction&b=2` → `scheme://…?a=1&b=2`.
    private static func splitURI(_ url: String) -> (String, [String: String]) {
        guard let mark = url.firstIndex(of: "?") else { return (url, [:]) }
        var kept: [Substring] = []
        var options: [String: String] = [:]
        for pair in url[url.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false) {
            let name = pair.prefix { $0 != "=" }
            guard name.hasPrefix(prefix) else {
                kept.append(pair)
                continue
            }
            let value = pair.dropFirst(name.count + 1)
            options[String(name.dropFirst(prefix.count))] = percentDecoded(value)
        }
        let base = String(url[..<mark])
        return (kept.isEmpty ? base : base + "?" + kept.joined(separator: "&"), options)
    }

    /// `host=/run dbname=s settingsd_pool='transaction'` → `host=/run dbname=s`: each pair is read
    /// as libpq reads it (a value in single quotes may hold spaces; a backslash escapes).
    private static func splitKeywords(_ conninfo: String) -> (String, [String: String]) {
        let bytes = Array(conninfo.utf8)
        var kept: [String] = []
        var options: [String: String] = [:]
        var index = 0
        func skipSpaces() {
            while index < bytes.count, bytes[index] == 0x20 || (9...13).contains(bytes[index]) { index += 1 }
        }
        while true {
            skipSpaces()
            guard index < bytes.count else { break }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), bytes[index] != 0x20 { index += 1 }
            let name = String(decoding: bytes[start..<index], as: UTF8.self)
            skipSpaces()
            // Not a pair libpq can read: left to libpq, which says why.
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return (conninfo, [:]) }
            index += 1
            skipSpaces()
            var value: [UInt8] = []
            let quoted = index < bytes.count && bytes[index] == UInt8(ascii: "'")
            if quoted { index += 1 }
            while index < bytes.count {
                let byte = bytes[index]
                if quoted ? byte == UInt8(ascii: "'") : (byte == 0x20 || (9...13).contains(byte)) { break }
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                value.append(bytes[index])
                index += 1
            }
            if quoted { index += 1 }
            let pair = String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
            if name.hasPrefix(prefix) {
                options[String(name.dropFirst(prefix.count))] = String(decoding: value, as: UTF8.self)
            } else {
                kept.append(pair)
            }
        }
        return (kept.joined(separator: " "), options)
    }

    /// `text` with every `%XX` decoded (a `%` not followed by two hexadecimal digits stays).
    private static func percentDecoded(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(
                    String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                decoded.append(value)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
