package import SettingsStore
package import SettingsWire

/// A replica as the command line and tools use it, typed: read, write, describe, list, export,
/// import, history, revert and status, each with a typed result.
///
/// Two types conform: `BlockingClient`, a daemon over its socket, and `DirectClient`, a database
/// file opened in this process (`settingsd --db PATH`). Each provides only `answer(_:)` and
/// `answerImport(_:replacingExisting:under:)`; the typed operations below send the same wire
/// requests through either and read the answers with the same decoders, which the daemon's own
/// encoders are tested against, so both paths answer alike.
///
/// ```swift
/// let service: any SettingsService = try BlockingClient(socketPath: SettingsPaths.socket)
/// let volume = try service.value(forKey: "audio.volume")
/// ```
package protocol SettingsService {
    /// Answers one request with the result's fields (the wire's form, see `docs/PROTOCOL.md`).
    func answer(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue]

    /// Imports `document` in one transaction, however large, and answers with the result's fields.
    func answerImport(_ document: ExportDocument, replacingExisting: Bool, under prefixes: [String])
        throws(SettingsError) -> [String: JSONValue]
}

extension SettingsService {
    /// The effective value of `key` (`get`), or nil when it has none.
    package func value(forKey key: String) throws(SettingsError) -> SettingValue? {
        try answer(.get(key: key))["value"].map { json throws(SettingsError) in try SettingValue(json: json) }
    }

    /// The values stored for `keys` (`getMany`, at most `WireRequest.maximumItems`); keys
    /// without one are absent.
    package func values(forKeys keys: [String]) throws(SettingsError) -> [String: SettingValue] {
        try storedValues(inGetManyAnswer: answer(.getMany(keys: keys)))
    }

    /// Everything known about `key` (`describe`).
    package func describe(_ key: String) throws(SettingsError) -> KeyDescription {
        try KeyDescription(fields: answer(.describe(key: key)))
    }

    /// The keys under `prefix`, with their values when `includeValues` (`list`).
    package func list(prefix: String, includeValues: Bool) throws(SettingsError) -> KeyListing {
        try KeyListing(fields: answer(.list(prefix: prefix, includeValues: includeValues)))
    }

    /// Every rule of the schemas in force, with the values of the keys they declare (`schema`).
    package func schemaEntries() throws(SettingsError) -> [SchemaEntry] {
        try SchemaEntry.entries(in: answer(.schema))
    }

    /// Writes `value` to `key`; it is durable when this returns.
    package func set(_ value: SettingValue, forKey key: String) throws(SettingsError) {
        _ = try answer(.set(key: key, value: value))
    }

    /// Deletes `key`; returns whether it held a value.
    @discardableResult
    package func removeValue(forKey key: String) throws(SettingsError) -> Bool {
        try answer(.delete(key: key))["existed"] == .bool(true)
    }

    /// Returns `key`, the keys under a prefix ending in `.`, or every key (`""`) to their defaults.
    package func reset(_ keyOrPrefix: String) throws(SettingsError) -> BulkChangeReport {
        try BulkChangeReport(fields: answer(.reset(keyOrPrefix: keyOrPrefix)), countingAs: "removed")
    }

    /// Every value now, or as it was at `time` (milliseconds since 1970).
    package func export(at time: UInt64? = nil) throws(SettingsError) -> ExportDocument {
        let fields = try answer(time.map { .exportAt(timeMilliseconds: $0) } ?? .export)
        return try ExportDocument(json: fields["document"] ?? .null)
    }

    /// Imports `document` in one transaction; with `replacingExisting`, keys it lacks are deleted
    /// (only those under one of `prefixes`, when it names any).
    package func importDocument(
        _ document: ExportDocument, replacingExisting: Bool = false, under prefixes: [String] = []
    ) throws(SettingsError) -> BulkChangeReport {
        try BulkChangeReport(
            fields: answerImport(document, replacingExisting: replacingExisting, under: prefixes),
            countingAs: "imported")
    }

    /// The history records `query` selects, newest first.
    package func history(_ query: HistoryQuery) throws(SettingsError) -> [HistoryRecord] {
        let members = try JSONFields(.object(answer(.history(query))), what: "a history result")
        return try members.array("records", limit: .max).map { json throws(SettingsError) in
            try HistoryRecord(json: json)
        }
    }

    /// Writes `key`'s value of `version` back, as a new write.
    package func revert(_ key: String, to version: SettingVersion) throws(SettingsError) {
        _ = try answer(.revert(key: key, version: version))
    }

    /// Returns `keyOrPrefix` (a key, or a prefix ending in `.`) to its values at `time`.
    package func revert(_ keyOrPrefix: String, before time: UInt64) throws(SettingsError) -> BulkChangeReport
    {
        try BulkChangeReport(
            fields: answer(.revertBefore(keyOrPrefix: keyOrPrefix, timeMilliseconds: time)),
            countingAs: "reverted")
    }

    /// The replica's state; `verifyingHubs` first makes every hub link compare digests again.
    package func status(verifyingHubs: Bool = false) throws(SettingsError) -> DaemonStatus {
        try DaemonStatus(fields: answer(verifyingHubs ? .statusVerifyingHubs : .status))
    }
}

/// The values of a `getMany` answer, by key.
func storedValues(inGetManyAnswer fields: [String: JSONValue]) throws(SettingsError) -> [String: SettingValue]
{
    let members = try JSONFields(.object(fields), what: "a getMany result")
    guard case .object(let stored)? = members.members["values"] else { return [:] }
    var values: [String: SettingValue] = [:]
    for (key, json) in stored { values[key] = try SettingValue(json: json) }
    return values
}
