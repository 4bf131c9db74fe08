/// Typed access to the fields of a JSON object, with `protocolError`s that name the field.
package struct JSONFields {
    package let members: JSONMembers

    package init(_ json: JSONValue, what: String) throws(SettingsError) {
        guard case .object(let members) = json else {
            throw SettingsError(.protocolError, "\(what) must be a JSON object, not \(json.typeName)")
        }
        self.members = JSONMembers(members)
    }

    /// Typed access to members already read.
    package init(_ members: JSONMembers) {
        self.members = members
    }

    /// Parses a frame that must hold a JSON object (`what` names it in errors), keeping its
    /// members in a list rather than a dictionary.
    package init(parsing frame: ArraySlice<UInt8>, what: String) throws(SettingsError) {
        var list = JSONMembers.List()
        try JSONParser.parseObject(frame, what: what, into: &list)
        members = JSONMembers(list)
    }

    package func string(_ name: String) throws(SettingsError) -> String {
        guard let value = try optionalString(name) else { throw missing(name, "a string") }
        return value
    }

    package func optionalString(_ name: String) throws(SettingsError) -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw Self.wrong(name, "a string", other)
        }
    }

    package func integer(_ name: String) throws(SettingsError) -> Int64 {
        guard let value = try optionalInteger(name) else { throw missing(name, "an integer") }
        return value
    }

    package func optionalInteger(_ name: String) throws(SettingsError) -> Int64? {
        try Self.optionalInteger(members[name], name: name)
    }

    /// `value` as the optional integer field `name` (nil or null: none).
    package static func optionalInteger(_ value: JSONValue?, name: String) throws(SettingsError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .integer(let value)?: return value
        case let other?: throw Self.wrong(name, "an integer", other)
        }
    }

    package func optionalNumber(_ name: String) throws(SettingsError) -> Double? {
        switch members[name] {
        case nil, .null?: return nil
        case .integer(let value)?: return Double(value)
        case .double(let value)?: return value
        case let other?: throw Self.wrong(name, "a number", other)
        }
    }

    package func bool(_ name: String, default defaultValue: Bool) throws(SettingsError) -> Bool {
        try Self.bool(members[name], name: name, default: defaultValue)
    }

    /// `value` as the boolean field `name`, `defaultValue` when nil or null.
    package static func bool(_ value: JSONValue?, name: String, default defaultValue: Bool)
        throws(SettingsError)
        -> Bool
    {
        switch value {
        case nil, .null?: return defaultValue
        case .bool(let value)?: return value
        case let other?: throw Self.wrong(name, "a boolean", other)
        }
    }

    package func value(_ name: String) throws(SettingsError) -> SettingValue {
        guard let json = members[name], json != .null else { throw missing(name, "a value") }
        do throws(SettingsError) {
            return try SettingValue(json: json)
        } catch {
            // A value over a limit is refused as such; a malformed one is the protocol's error.
            let code: SettingsError.Code = error.code == .limitExceeded ? .limitExceeded : .protocolError
            throw SettingsError(code, "field '\(name)': \(error.message)")
        }
    }

    package func strings(_ name: String, limit: Int) throws(SettingsError) -> [String]? {
        switch members[name] {
        case nil, .null?: return nil
        case .array(let elements)?:
            guard elements.count <= limit else {
                throw SettingsError(
                    .tooManyItems, "field '\(name)' lists \(elements.count) items, over the limit of \(limit)"
                )
            }
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let text) = element else {
                    throw Self.wrong(name, "an array of strings", element)
                }
                strings.append(text)
            }
            return strings
        case let other?: throw Self.wrong(name, "an array of strings", other)
        }
    }

    package func optionalArray(_ name: String) throws(SettingsError) -> [JSONValue]? {
        switch members[name] {
        case nil, .null?: return nil
        case .array(let elements)?: return elements
        case let other?: throw Self.wrong(name, "an array", other)
        }
    }

    package func array(_ name: String, limit: Int) throws(SettingsError) -> [JSONValue] {
        switch members[name] {
        case .array(let elements)?:
            guard elements.count <= limit else {
                throw SettingsError(
                    .tooManyItems, "field '\(name)' lists \(elements.count) items, over the limit of \(limit)"
                )
            }
            return elements
        case nil, .null?: throw missing(name, "an array")
        case let other?: throw Self.wrong(name, "an array", other)
        }
    }

    private func missing(_ name: String, _ type: String) -> SettingsError {
        SettingsError(.protocolError, "missing field '\(name)' (\(type))")
    }

    private static func wrong(_ name: String, _ type: String, _ value: JSONValue) -> SettingsError {
        SettingsError(.protocolError, "field '\(name)' must be \(type), not \(value.typeName)")
    }
}
