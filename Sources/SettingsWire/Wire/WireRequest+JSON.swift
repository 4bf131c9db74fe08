package import SettingsStore

extension WireRequest {
    /// Reads a request frame: its id (nil when none could be read) and the request, or the error
    /// to answer it with.
    package static func decode(_ json: JSONValue) -> (id: Int64?, request: Result<WireRequest, SettingsError>)
    {
        do throws(SettingsError) {
            return decode(try JSONFields(json, what: "a request"))
        } catch {
            return (nil, .failure(error))
        }
    }

    /// Reads a request straight from a frame's bytes, without building a `JSONValue` tree for
    /// its top level; answers exactly as `decode(_:)` of the parsed frame would.
    package static func decode(frame: ArraySlice<UInt8>) -> (
        id: Int64?, request: Result<WireRequest, SettingsError>
    ) {
        do throws(SettingsError) {
            return decode(try JSONFields(parsing: frame, what: "a request"))
        } catch {
            return (nil, .failure(error))
        }
    }

    private static func decode(_ fields: JSONFields) -> (
        id: Int64?, request: Result<WireRequest, SettingsError>
    ) {
        let id: Int64
        switch fields.members["id"] {
        case nil, .null?:
            // An answer the client cannot match to its request would be a guess: nothing runs.
            return (
                nil,
                .failure(SettingsError(.protocolError, "missing field 'id' (an integer the answer echoes)"))
            )
        case .integer(let value)?: id = value
        case let other?:
            // Nothing runs under an id the client could not match its answer to.
            return (
                nil,
                .failure(
                    SettingsError(.protocolError, "field 'id' must be an integer, not \(other.typeName)"))
            )
        }
        do throws(SettingsError) {
            return (id, .success(try decodeRequest(fields)))
        } catch {
            return (id, .failure(error))
        }
    }

    private static func decodeRequest(_ fields: JSONFields) throws(SettingsError) -> WireRequest {
        let operation = try fields.string("op")
        switch operation {
        case "hello":
            return .hello(try Hello(fields: fields))
        case "get":
            let key = try fields.string("key")
            if try fields.bool("stored", default: false) { return .getStored(key: key) }
            return try fields.bool("versioned", default: false) ? .getVersioned(key: key) : .get(key: key)
        case "getMany": return .getMany(keys: try fields.strings("keys", limit: maximumItems) ?? [])
        case "set":
            let key = try fields.string("key")
            let precondition = try Self.precondition(fields)
            if let text = try fields.optionalString("text") {
                guard fields.members["value"] == nil else {
                    throw SettingsError(.protocolError, "a set carries 'value' or 'text', not both")
                }
                return .setText(key: key, text: text, precondition: precondition)
            }
            return .set(key: key, value: try fields.value("value"), precondition: precondition)
        case "setMany":
            var changes: [KeyWrite] = []
            for element in try fields.array("changes", limit: maximumItems) {
                let change = try JSONFields(element, what: "each of 'changes'")
                let key = try change.string("key")
                let precondition = try Self.precondition(change)
                if try change.bool("delete", default: false) {
                    changes.append(KeyWrite(key: key, value: nil, if: precondition))
                } else {
                    changes.append(KeyWrite(key: key, value: try change.value("value"), if: precondition))
                }
            }
            return .setMany(changes: changes)
        case "delete":
            return .delete(key: try fields.string("key"), precondition: try Self.precondition(fields))
        case "list":
            return .list(
                prefix: try fields.optionalString("prefix") ?? "",
                includeValues: try fields.bool("values", default: false))
        case "watch":
            let keys = try fields.strings("keys", limit: maximumItems)
            let prefixes = try fields.strings("prefixes", limit: maximumItems)
            if keys?.isEmpty ?? true, prefixes?.isEmpty ?? true, keys != nil || prefixes != nil {
                throw SettingsError(
                    .protocolError,
                    "this watch selects nothing (empty 'keys' and 'prefixes'); leave both out to watch every key"
                )
            }
            let since = try fields.optionalInteger("since")
            if let since, since < 0 {
                throw SettingsError(.protocolError, "field 'since' must be a sequence number, 0 or more")
            }
            switch (keys, prefixes) {
            case (nil, nil): return .watch(filter: .all, since: since)
            case (let keys?, nil): return .watch(filter: .keys(Set(keys)), since: since)
            case (nil, let prefixes?): return .watch(filter: .prefixes(prefixes), since: since)
            case (let keys?, let prefixes?):
                return .watch(filter: .keysOrPrefixes(keys: Set(keys), prefixes: prefixes), since: since)
            }
        case "unwatch": return .unwatch(watch: try fields.integer("watch"))
        case "status": return try fields.bool("verify", default: false) ? .statusVerifyingHubs : .status
        case "export":
            guard let at = try fields.optionalInteger("at") else { return .export }
            return .exportAt(timeMilliseconds: UInt64(clamping: at))
        case "import":
            guard let document = fields.members["document"] else {
                throw SettingsError(.protocolError, "missing field 'document' (an export document)")
            }
            return .import(
                document: try ExportDocument(json: document),
                replace: try fields.bool("replace", default: false),
                replacingUnder: try fields.strings("replaceUnder", limit: 10_000) ?? [])
        case "importPart":
            guard let document = fields.members["document"] else {
                throw SettingsError(.protocolError, "missing field 'document' (an export document)")
            }
            return .importPart(document: try ExportDocument(json: document))
        case "describe": return .describe(key: try fields.string("key"))
        case "schema": return .schema
        case "reset":
            // Everything is asked for by name (`"all": true`), never by a missing or empty key.
            if try fields.bool("all", default: false) { return .reset(keyOrPrefix: "") }
            let key = try fields.string("key")
            guard !key.isEmpty else {
                throw SettingsError(
                    .invalidKey, "reset of '' names no key; send \"all\": true to reset everything")
            }
            return .reset(keyOrPrefix: key)
        case "history":
            return .history(
                HistoryQuery(
                    keyOrPrefix: try fields.optionalString("key"),
                    sinceMilliseconds: try fields.optionalInteger("since").map { UInt64(clamping: $0) },
                    untilMilliseconds: try fields.optionalInteger("until").map { UInt64(clamping: $0) },
                    limit: Int(clamping: min(try fields.optionalInteger("limit") ?? 100, 100_000))))
        case "revert":
            let key = try fields.string("key")
            if let text = try fields.optionalString("version") {
                guard let version = SettingVersion(text) else {
                    throw SettingsError(
                        .protocolError, "field 'version' must read 'milliseconds.counter@replica'")
                }
                return .revert(key: key, version: version)
            }
            return .revertBefore(
                keyOrPrefix: key, timeMilliseconds: UInt64(clamping: try fields.integer("before")))
        default:
            throw SettingsError(
                .unknownOperation, "unknown operation '\(operation.debugDescriptionTruncated)'")
        }
    }

    /// The precondition a write's fields carry: `ifVersion` (a version) or `ifAbsent: true`.
    private static func precondition(_ fields: JSONFields) throws(SettingsError) -> SettingPrecondition? {
        let absent = try fields.bool("ifAbsent", default: false)
        guard let text = try fields.optionalString("ifVersion") else { return absent ? .absent : nil }
        guard !absent else {
            throw SettingsError(.protocolError, "a write carries 'ifVersion' or 'ifAbsent', not both")
        }
        guard let version = SettingVersion(text) else {
            throw SettingsError(.protocolError, "field 'ifVersion' must read 'milliseconds.counter@replica'")
        }
        return .version(version)
    }

    /// Writes `precondition` as the fields that carry it.
    private static func write(_ precondition: SettingPrecondition?, to members: inout [String: JSONValue]) {
        switch precondition {
        case .version(let version)?: members["ifVersion"] = .string(version.description)
        case .absent?: members["ifAbsent"] = .bool(true)
        case nil: break
        }
    }

    /// Appends the frame's text (without its newline): `json(id:)` serialized, written directly
    /// for the requests clients send most.
    package func write(id: Int64, to bytes: inout [UInt8]) {
        switch self {
        case .get(let key):
            Self.writeHead(id: id, key: key, to: &bytes)
            bytes.append(contentsOf: #","op":"get"}"#.utf8)
        case .delete(let key, nil):
            Self.writeHead(id: id, key: key, to: &bytes)
            bytes.append(contentsOf: #","op":"delete"}"#.utf8)
        case .set(let key, let value, nil):
            Self.writeHead(id: id, key: key, to: &bytes)
            bytes.append(contentsOf: #","op":"set","value":"#.utf8)
            value.json.write(to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        default:
            json(id: id).write(to: &bytes)
        }
    }

    /// `{"id":ID,"key":KEY`: the members that sort before `op`.
    private static func writeHead(id: Int64, key: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"id":"#.utf8)
        JSONValue.write(integer: id, to: &bytes)
        bytes.append(contentsOf: #","key":"#.utf8)
        JSONValue.write(string: key, to: &bytes)
    }

    /// The request as a frame's JSON object, with `id`.
    package func json(id: Int64) -> JSONValue {
        var members: [String: JSONValue] = ["id": .integer(id), "op": .string(operation)]
        switch self {
        case .hello(let hello):
            hello.write(to: &members)
        case .reset(let key) where key.isEmpty:
            members["all"] = .bool(true)
        case .get(let key), .describe(let key), .reset(let key):
            members["key"] = .string(key)
        case .getStored(let key):
            members["key"] = .string(key)
            members["stored"] = .bool(true)
        case .getVersioned(let key):
            members["key"] = .string(key)
            members["versioned"] = .bool(true)
        case .delete(let key, let precondition):
            members["key"] = .string(key)
            Self.write(precondition, to: &members)
        case .getMany(let keys):
            members["keys"] = .array(keys.map { .string($0) })
        case .set(let key, let value, let precondition):
            members["key"] = .string(key)
            members["value"] = value.json
            Self.write(precondition, to: &members)
        case .setText(let key, let text, let precondition):
            members["key"] = .string(key)
            members["text"] = .string(text)
            Self.write(precondition, to: &members)
        case .setMany(let changes):
            members["changes"] = .array(
                changes.map { change in
                    var fields: [String: JSONValue] = ["key": .string(change.key)]
                    if let value = change.value {
                        fields["value"] = value.json
                    } else {
                        fields["delete"] = .bool(true)
                    }
                    Self.write(change.precondition, to: &fields)
                    return .object(fields)
                })
        case .list(let prefix, let includeValues):
            members["prefix"] = .string(prefix)
            members["values"] = .bool(includeValues)
        case .watch(let filter, let since):
            if let since { members["since"] = .integer(since) }
            switch filter {
            case .keys(let keys): members["keys"] = .array(keys.sorted().map { .string($0) })
            case .prefixes(let prefixes): members["prefixes"] = .array(prefixes.map { .string($0) })
            case .keysOrPrefixes(let keys, let prefixes):
                members["keys"] = .array(keys.sorted().map { .string($0) })
                members["prefixes"] = .array(prefixes.map { .string($0) })
            case .all: break
            }
        case .unwatch(let watch):
            members["watch"] = .integer(watch)
        case .status, .export, .schema:
            break
        case .statusVerifyingHubs:
            members["verify"] = .bool(true)
        case .history(let query):
            if let key = query.keyOrPrefix { members["key"] = .string(key) }
            if let since = query.sinceMilliseconds { members["since"] = .integer(Int64(clamping: since)) }
            if let until = query.untilMilliseconds { members["until"] = .integer(Int64(clamping: until)) }
            members["limit"] = .integer(Int64(query.limit))
        case .revert(let key, let version):
            members["key"] = .string(key)
            members["version"] = .string(version.description)
        case .revertBefore(let key, let time):
            members["key"] = .string(key)
            members["before"] = .integer(Int64(clamping: time))
        case .exportAt(let time):
            members["at"] = .integer(Int64(clamping: time))
        case .import(let document, let replace, let prefixes):
            members["document"] = document.json
            members["replace"] = .bool(replace)
            if !prefixes.isEmpty { members["replaceUnder"] = .array(prefixes.map { .string($0) }) }
        case .importPart(let document):
            members["document"] = document.json
        }
        return .object(members)
    }
}
