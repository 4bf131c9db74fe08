package import SettingsStore

/// The fields of a daemon's answer, without the envelope (`id`, `ok`): looked up by name, or all
/// at once as a dictionary.
///
/// Answers read from a frame keep their fields as they were parsed, without the hash table a
/// dictionary builds (an answer has a handful of fields), so a long pipeline's answers cost
/// less to read; `fields` builds the dictionary when one is wanted.
///
/// ```swift
/// let answers = try client.pipeline([.get(key: "audio.volume"), .get(key: "ui.theme")])
/// let volume = try answers[0].get()["value"]
/// ```
package struct WireAnswer: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    package let members: JSONMembers

    package init(_ members: JSONMembers) {
        self.members = members
    }

    /// An answer with these fields.
    package init(_ fields: [String: JSONValue]) {
        members = JSONMembers(fields)
    }

    /// An answer with these fields; a repeated name keeps its last value.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements) { $1 })
    }

    /// The field called `name`, or nil.
    package subscript(name: String) -> JSONValue? {
        members[name]
    }

    /// Every field, by name.
    package var fields: [String: JSONValue] {
        members.dictionary
    }

    /// Whether both answers have the same fields, whatever order they were read in.
    package static func == (lhs: WireAnswer, rhs: WireAnswer) -> Bool {
        lhs.fields == rhs.fields
    }
}
