import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// Turns requests into answers: reads are answered from the store's memory at once; writes
/// become work for the round's write batch.
struct RequestHandler {
    let settings: Settings
    /// The daemon serving the requests, or nil when they run in this process (`DirectClient`).
    let server: ServerContext?

    /// What to do with a request.
    enum Outcome {
        /// Answer now with these result fields, or this error.
        case answer(Result<[String: JSONValue], SettingsError>)
        /// Answer a `get` with this value (nil: not found) and, when asked, the version of the
        /// key's stored value; see `WireMessage.valueFields(_:version:)`.
        case value(SettingValue?, SettingVersion?)
        /// Submit these writes; answer when they are durable.
        case write(reason: ChangeReason, apply: @Sendable (SettingsTransaction) throws -> [String: JSONValue])
    }

    func handle(_ request: WireRequest) -> Outcome {
        switch request {
        case .hello(let hello):
            do throws(SettingsError) {
                try hello.checkVersion()
            } catch {
                return .answer(.failure(error))
            }
            guard hello.role == .client else {
                return .answer(
                    .failure(
                        SettingsError(
                            .protocolError, "a replica's hello must be the first frame of its connection")
                    ))
            }
            let welcome = Welcome(
                clientOf: settings.replicaID, maximumFrameBytes: server?.configuration.maximumFrameBytes)
            return .answer(.success(welcome.fields))
        case .get(let key):
            // The effective value: the lock's, the stored one, or a default (system, schema).
            return .value(settings.value(forKey: key), nil)
        case .getVersioned(let key):
            let (value, version) = settings.effectiveValueAndStoredVersion(forKey: key)
            return .value(value, version)
        case .getStored(let key):
            let stored = settings.versionedValue(forKey: key)
            return .value(stored?.value, stored?.version)
        case .getMany(let keys):
            var values: [String: JSONValue] = [:]
            for key in keys { if let value = settings.value(forKey: key) { values[key] = value.json } }
            return .answer(.success(["values": .object(values)]))
        case .list(let prefix, let includeValues):
            return .answer(
                .success(KeyListing(prefix: prefix, includeValues: includeValues, in: settings).fields))
        case .status:
            return .answer(.success(StatusReport.status(of: settings, server: server).fields))
        case .statusVerifyingHubs:
            server?.replicator.verifyHubs()
            return .answer(.success(StatusReport.status(of: settings, server: server).fields))
        case .export:
            return .answer(.success(["document": ExportDocument(values: settings.snapshot()).json]))
        case .set(let key, let value, let precondition):
            return .write(reason: .local) { transaction in
                if let precondition { try transaction.require(precondition, forKey: key) }
                try transaction.set(value, forKey: key)
                return [:]
            }
        case .setText(let key, let text, let precondition):
            // Typed by the schemas in force when the write runs, under the writer lock.
            return .write(reason: .local) { [settings] transaction in
                if let precondition { try transaction.require(precondition, forKey: key) }
                try transaction.set(try ValueText.parse(text, forKey: key, in: settings), forKey: key)
                return [:]
            }
        case .setMany(let changes):
            return .write(reason: .local) { transaction in
                try transaction.write(changes)
                return [:]
            }
        case .delete(let key, let precondition):
            return .write(reason: .local) { transaction in
                if let precondition { try transaction.require(precondition, forKey: key) }
                let existed = transaction.value(forKey: key) != nil
                try transaction.removeValue(forKey: key)
                return ["existed": .bool(existed)]
            }
        case .import(let document, let replace, let prefixes):
            return .write(reason: .import) { transaction in
                let skipped = try transaction.importValues(
                    document.values, replacingExisting: replace, under: prefixes)
                let written = document.values.count - skipped.filter { document.values[$0] != nil }.count
                return BulkChangeReport(count: written, skippedLocked: skipped).fields(countingAs: "imported")
            }
        case .describe(let key):
            return .answer(.success(KeyDescription(KeyIdentity.normalize(key), in: settings).fields))
        case .schema:
            return .answer(.success(SchemaEntry.fields(of: SchemaEntry.all(in: settings))))
        case .reset(let keyOrPrefix):
            return .write(reason: .reset) { transaction in
                let (removed, skipped) = try transaction.resetReporting(keyOrPrefix)
                return BulkChangeReport(count: removed, skippedLocked: skipped).fields(countingAs: "removed")
            }
        case .history(let query):
            do throws(SettingsError) {
                let records = try settings.history(query)
                return .answer(.success(["records": .array(records.map(\.json))]))
            } catch {
                return .answer(.failure(error))
            }
        case .exportAt(let time):
            do throws(SettingsError) {
                return .answer(
                    .success(["document": ExportDocument(values: try settings.snapshot(at: time)).json]))
            } catch {
                return .answer(.failure(error))
            }
        case .revert(let key, let version):
            // Read before the write: the history is read under the store's writer lock.
            do throws(SettingsError) {
                let value = try settings.historicValue(of: key, version: version)
                return .write(reason: .revert) { transaction in
                    try transaction.set(value, forKey: key)
                    return [:]
                }
            } catch {
                return .answer(.failure(error))
            }
        case .revertBefore(let key, let time):
            do throws(SettingsError) {
                let changes = try settings.historicValues(under: key, at: time)
                return .write(reason: .revert) { transaction in
                    let skipped = try transaction.restore(changes, under: key)
                    return BulkChangeReport(count: changes.count - skipped.count, skippedLocked: skipped)
                        .fields(countingAs: "reverted")
                }
            } catch {
                return .answer(.failure(error))
            }
        case .watch, .unwatch, .importPart:
            // Watches belong to the connection, which handles them itself.
            return .answer(
                .failure(
                    SettingsError(.unknownOperation, "'\(request.operation)' is handled by the connection")))
        }
    }
}
