package import SettingsStore
import SettingsWire

/// What a write over many keys did (`reset`, `import`, `revert --before`): how many keys it
/// changed, and the locked keys it left as their locks hold them.
package struct BulkChangeReport: Sendable, Equatable {
    /// The keys removed, imported or reverted.
    package var count: Int
    /// The locked keys left as they are.
    package var skippedLocked: [String]

    /// A report of `count` keys changed and `skippedLocked` left alone.
    package init(count: Int, skippedLocked: [String]) {
        self.count = count
        self.skippedLocked = skippedLocked
    }

    /// The result's fields, with the count under `countField` (`removed`, `imported`, `reverted`).
    package func fields(countingAs countField: String) -> [String: JSONValue] {
        [countField: .integer(Int64(count)), "skippedLocked": .array(skippedLocked.map { .string($0) })]
    }

    /// Reads a result whose count is under `countField`.
    package init(fields: [String: JSONValue], countingAs countField: String) throws(SettingsError) {
        let members = try JSONFields(.object(fields), what: "the result")
        count = Int(clamping: try members.optionalInteger(countField) ?? 0)
        skippedLocked = try members.strings("skippedLocked", limit: .max) ?? []
    }
}
