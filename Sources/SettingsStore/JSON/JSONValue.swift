/// A JSON document, parsed losslessly: integers and doubles stay distinct.
///
/// The wire protocol, the CLI's `--json` forms and export documents all go through this type;
/// see `JSONValue.parse(_:)` and `serialized(pretty:)`.
package enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent, within the 64-bit range.
    case integer(Int64)
    /// A number written with a fraction or exponent.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys are unique (the parser refuses a repeated key).
    case object([String: JSONValue])

    /// The member `key` of an object, or nil.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The JSON type's name, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A `.string`.
    package init(stringLiteral value: String) {
        self = .string(value)
    }
}
