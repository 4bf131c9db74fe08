package import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A lineage on the wire: `[["<incarnation uuid>", <start sequence>], ...]`, oldest first.
extension Lineage {
    var json: JSONValue {
        .array(
            incarnations.map { .array([.string($0.id.uuidString), .integer($0.startSequence)]) })
    }

    /// Reads a lineage, or nil when `json` is absent.
    package init?(json: JSONValue?) throws(SettingsError) {
        guard let json, json != .null else { return nil }
        guard case .array(let elements) = json, !elements.isEmpty, elements.count <= Self.limit else {
            throw SettingsError(
                .protocolError, "field 'lineage' must list 1 to \(Self.limit) incarnations")
        }
        var incarnations: [Incarnation] = []
        for element in elements {
            guard case .array(let pair) = element, pair.count == 2, case .string(let text) = pair[0],
                let id = UUID(uuidString: text), case .integer(let start) = pair[1]
            else {
                throw SettingsError(
                    .protocolError, "each incarnation in 'lineage' must be [\"<uuid>\", <sequence>]")
            }
            incarnations.append(Incarnation(id: id, startSequence: start))
        }
        self.init(incarnations)
    }
}
