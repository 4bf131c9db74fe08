/// What makes a rule impossible or meaningless, found when a schema file is read rather than
/// left to fail (or pass) silently on every write.
extension SchemaRule {
    /// The fields a JSON rule may have.
    static let fieldNames = Set(
        [
            "type", "default", "min", "max", "choices", "maxLength", "summary", "description", "scope",
            "secret",
        ]
            + nativeTypeFields.keys)

    /// Why the rule cannot be declared as it is, or nil.
    var declarationProblem: String? {
        if let problem = keyProblem { return problem }
        let numeric = [.int, .double, .any].contains(type)
        if !numeric, minimum != nil || maximum != nil {
            return "'min' and 'max' bound numbers; a \(type.rawValue) has none"
        }
        if let minimum, let maximum, minimum > maximum {
            return "'min' (\(minimum)) is above 'max' (\(maximum))"
        }
        if let choices {
            guard [.string, .array, .any].contains(type) else {
                return "'choices' lists strings (or an array's strings); a \(type.rawValue) has none"
            }
            if choices.isEmpty { return "'choices' is empty: no value could be stored" }
        }
        if let maximumLength {
            guard [.string, .data, .array, .dictionary, .any].contains(type) else {
                return
                    "'maxLength' bounds strings, data, arrays and dictionaries; a \(type.rawValue) has no length"
            }
            if maximumLength < 0 { return "'maxLength' is negative" }
        }
        return nil
    }

    /// A `*` stands for whole names only, and a key does not end in a dot.
    private var keyProblem: String? {
        if key == "*" { return "'*' alone would cover every key; write a prefix before it ('app.*')" }
        if key.hasSuffix(".") {
            return "a key ending in '.' names no key; for every key under it write '\(key)*'"
        }
        let names = key.split(separator: ".", omittingEmptySubsequences: false)
        if names.contains(where: { $0 != "*" && $0.contains("*") }) {
            return "'*' stands for whole names only ('a.*.b', 'a.*'), not part of one"
        }
        return nil
    }
}
