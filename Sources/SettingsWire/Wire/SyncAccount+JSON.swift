package import SettingsStore

/// An account on the wire, in a replica's hello and its answer:
/// `{"namespace": "<name>", "since": <stamp>}`.
extension SyncAccount {
    /// The longest namespace name a peer may announce, in bytes (PostgreSQL names a role in 63).
    static let maximumNamespaceBytes = 256

    var json: JSONValue {
        .object(["namespace": .string(namespace), "since": .integer(Int64(bitPattern: since.rawValue))])
    }

    /// Reads an account, or nil when `json` is absent.
    package init?(json: JSONValue?) throws(SettingsError) {
        guard let json, json != .null else { return nil }
        let fields = try JSONFields(json, what: "field 'account'")
        let namespace = try fields.string("namespace")
        guard !namespace.isEmpty, namespace.utf8.count <= Self.maximumNamespaceBytes else {
            throw SettingsError(
                .protocolError,
                "field 'account' must name a namespace of 1 to \(Self.maximumNamespaceBytes) bytes")
        }
        let raw = try fields.integer("since")
        let since = HybridTimestamp(rawValue: UInt64(clamping: raw))
        guard raw >= 0, since.milliseconds < HybridTimestamp.maximumMilliseconds else {
            throw SettingsError(.protocolError, "field 'account.since' \(raw) is out of range")
        }
        self.init(namespace: namespace, since: since)
    }
}
