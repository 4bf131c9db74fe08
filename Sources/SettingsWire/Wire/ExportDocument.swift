public import SettingsStore

/// Every value of a store as one JSON document, for `export` and `import`.
///
/// `{"format": "settingsd-export", "version": 2, "values": {"key": value, ...}}`. Version 1
/// documents (written before dates became exact) are still read.
public struct ExportDocument: Sendable, Equatable {
    /// The `format` field every document carries.
    package static let format = "settingsd-export"
    /// The document version this library writes; it also reads version 1, whose `$date` numbers
    /// count seconds since 1970.
    package static let version: Int64 = 2

    /// The values, by key.
    public var values: [String: SettingValue]

    /// A document holding `values`.
    public init(values: [String: SettingValue]) {
        self.values = values
    }

    /// Reads a document, checking its format, version, and every value.
    ///
    /// - Throws: `SettingsError` with code `protocolError` saying what is wrong.
    package init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "an export document")
        guard try fields.optionalString("format") == Self.format else {
            throw SettingsError(
                .protocolError, "not a settingsd export document (field 'format' must be '\(Self.format)')")
        }
        let version = try fields.integer("version")
        guard version == Self.version || version == 1 else {
            throw SettingsError(
                .unsupportedVersion,
                "export document version \(version) is not supported (this build reads 1 and \(Self.version))"
            )
        }
        guard case .object(let members)? = fields.members["values"] else {
            throw SettingsError(.protocolError, "field 'values' must be an object of key: value")
        }
        var values: [String: SettingValue] = [:]
        values.reserveCapacity(members.count)
        for (key, member) in members {
            do throws(SettingsError) {
                values[key] = try version == 1 ? SettingValue(legacyJSON: member) : SettingValue(json: member)
            } catch {
                throw SettingsError(
                    .protocolError, "value of '\(key.debugDescriptionTruncated)': \(error.message)", key: key)
            }
        }
        self.values = values
    }

    /// Parses a document from JSON text; a UTF-8 byte-order mark at the start is skipped (editors
    /// on other systems add one).
    public init(jsonText: some Collection<UInt8>) throws(SettingsError) {
        let bytes = Array(jsonText)
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let body = bytes.starts(with: byteOrderMark) ? bytes[3...] : bytes[...]
        try self.init(json: JSONValue.parse(body))
    }

    /// The document split into documents whose JSON forms take about `bytes` each (a value
    /// larger than that goes alone), in key order, for sending a large document in parts.
    package func parts(ofAbout bytes: Int) -> [ExportDocument] {
        var parts: [ExportDocument] = []
        var current: [String: SettingValue] = [:]
        var size = 0
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let cost = key.utf8.count * 6 + value.json.serializedSize + 8
            if size + cost > bytes, !current.isEmpty {
                parts.append(ExportDocument(values: current))
                current = [:]
                size = 0
            }
            current[key] = value
            size += cost
        }
        if !current.isEmpty || parts.isEmpty { parts.append(ExportDocument(values: current)) }
        return parts
    }

    /// The document's JSON form.
    package var json: JSONValue {
        .object([
            "format": .string(Self.format), "version": .integer(Self.version),
            "values": .object(values.mapValues(\.json)),
        ])
    }
}
