/// Every value of a store as one JSON document, for `export` and `import`.
///
/// `{"format": "settingsd-export", "version": 1, "values": {"key": value, ...}}`
public struct ExportDocument: Sendable, Equatable {
    /// The `format` field every document carries.
    public static let format = "settingsd-export"
    /// The document version this library writes and reads.
    public static let version: Int64 = 1

    /// The values, by key.
    public var values: [String: SettingValue]

    /// A document holding `values`.
    public init(values: [String: SettingValue]) {
        self.values = values
    }

    /// Reads a document, checking its format, version, and every value.
    ///
    /// - Throws: `SettingsError` with code `protocolError` saying what is wrong.
    public init(json: JSONValue) throws(SettingsError) {
        let fields = try JSONFields(json, what: "an export document")
        guard try fields.optionalString("format") == Self.format else {
            throw SettingsError(
                .protocolError, "not a settingsd export document (field 'format' must be '\(Self.format)')")
        }
        let version = try fields.integer("version")
        guard version == Self.version else {
            throw SettingsError(
                .unsupportedVersion,
                "export document version \(version) is not supported (expected \(Self.version))")
        }
        guard case .object(let members)? = fields.members["values"] else {
            throw SettingsError(.protocolError, "field 'values' must be an object of key: value")
        }
        var values: [String: SettingValue] = [:]
        values.reserveCapacity(members.count)
        for (key, member) in members {
            do throws(SettingsError) {
                values[key] = try SettingValue(json: member)
            } catch {
                throw SettingsError(
                    .protocolError, "value of '\(key.debugDescriptionTruncated)': \(error.message)", key: key)
            }
        }
        self.values = values
    }

    /// Parses a document from JSON text.
    public init(jsonText: some Collection<UInt8>) throws(SettingsError) {
        try self.init(json: JSONValue.parse(jsonText))
    }

    /// The document's JSON form.
    public var json: JSONValue {
        .object([
            "format": .string(Self.format), "version": .integer(Self.version),
            "values": .object(values.mapValues(\.json)),
        ])
    }
}
