#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON form of values used on the wire, by the CLI and in export documents
/// (see `docs/PROTOCOL.md`): natural JSON where it is unambiguous, tagged objects where not.
extension SettingValue {
    /// The value's JSON form.
    package var json: JSONValue {
        switch self {
        case .bool(let value): .bool(value)
        case .integer(let value): .integer(value)
        case .double(let value):
            value.isFinite
                ? .double(value)
                : .object(["$double": .string(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf")])
        case .string(let value): .string(value)
        case .data(let value): .object(["$data": .string(value.base64EncodedString())])
        case .date(let value): .object(["$date": .double(value.timeIntervalSinceReferenceDate)])
        case .array(let values): .array(values.map(\.json))
        case .dictionary(let values):
            Self.isTagLike(values.keys)
                ? .object(["$dict": .object(values.mapValues(\.json))]) : .object(values.mapValues(\.json))
        }
    }

    /// Reads a value from its JSON form.
    ///
    /// - Throws: `SettingsError` with code `protocolError` for `null`, a malformed tagged object,
    ///   and `limitExceeded` for nesting deeper than `maximumNestingDepth`.
    package init(json: JSONValue) throws(SettingsError) {
        self = try Self.decode(json, depth: 0, datesSince1970: false)
    }

    /// Reads a value from the JSON form of protocol version 1 and export documents of version 1,
    /// where a `$date` number counted seconds since 1970 (and so could not carry every date).
    package init(legacyJSON json: JSONValue) throws(SettingsError) {
        self = try Self.decode(json, depth: 0, datesSince1970: true)
    }

    /// Parses a JSON text into a value.
    public init(jsonText: String) throws(SettingsError) {
        try self.init(json: JSONValue.parse(jsonText))
    }

    private static func isTagLike(_ keys: some Collection<String>) -> Bool {
        keys.count == 1 && keys.first?.hasPrefix("$") == true
    }

    private static func decode(_ json: JSONValue, depth: Int, datesSince1970: Bool) throws(SettingsError)
        -> SettingValue
    {
        switch json {
        case .null:
            let message =
                depth == 0
                ? "null is not a value (delete the key instead)"
                : "null cannot stand inside a value (leave the member or element out instead)"
            throw SettingsError(.protocolError, message)
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .array(let elements):
            try checkContainer(depth: depth)
            var values: [SettingValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                values.append(try decode(element, depth: depth + 1, datesSince1970: datesSince1970))
            }
            return .array(values)
        case .object(let members):
            if isTagLike(members.keys), let (tag, payload) = members.first {
                return try decodeTagged(tag, payload, depth: depth, datesSince1970: datesSince1970)
            }
            try checkContainer(depth: depth)
            var values: [String: SettingValue] = [:]
            values.reserveCapacity(members.count)
            for (key, member) in members {
                values[key] = try decode(member, depth: depth + 1, datesSince1970: datesSince1970)
            }
            return .dictionary(values)
        }
    }

    /// A container at `depth` (0 for the outermost) nests `depth + 1` deep.
    private static func checkContainer(depth: Int) throws(SettingsError) {
        guard depth < maximumNestingDepth else {
            throw SettingsError(
                .limitExceeded, "value nests more than \(maximumNestingDepth) levels deep (the limit)")
        }
    }

    private static func decodeTagged(
        _ tag: String, _ payload: JSONValue, depth: Int, datesSince1970: Bool
    ) throws(SettingsError) -> SettingValue {
        switch (tag, payload) {
        case ("$data", .string(let base64)):
            guard let data = Data(base64Encoded: base64) else {
                throw SettingsError(.protocolError, "$data holds invalid base64")
            }
            return .data(data)
        case ("$date", .double(let seconds)):
            return .date(
                datesSince1970
                    ? Date(timeIntervalSince1970: seconds) : Date(timeIntervalSinceReferenceDate: seconds))
        case ("$date", .integer(let seconds)):
            let seconds = Double(seconds)
            return .date(
                datesSince1970
                    ? Date(timeIntervalSince1970: seconds) : Date(timeIntervalSinceReferenceDate: seconds))
        case ("$date", .string(let text)):
            guard let seconds = ISO8601.parse(text) else {
                throw SettingsError(
                    .protocolError,
                    "$date '\(text.debugDescriptionTruncated)' is not an ISO 8601 date like 2026-12-01T09:30:00Z"
                )
            }
            return .date(Date(timeIntervalSince1970: seconds))
        case ("$double", .string("nan")): return .double(.nan)
        case ("$double", .string("inf")): return .double(.infinity)
        case ("$double", .string("-inf")): return .double(-.infinity)
        case ("$dict", .object(let members)):
            try checkContainer(depth: depth)
            var values: [String: SettingValue] = [:]
            for (key, member) in members {
                values[key] = try decode(member, depth: depth + 1, datesSince1970: datesSince1970)
            }
            return .dictionary(values)
        default:
            throw SettingsError(
                .protocolError, "malformed tagged value '\(tag)' (a one-key object whose key starts with '$')"
            )
        }
    }
}
