import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// A schema file that uses every part of a rule: bounds, choices, lengths, GVariant types,
/// secrets, dates, patterns and scope-only rules.
let everyRuleSchema = #"""
    {"format": "settingsd-schema", "version": 1, "keys": {
      "audio.volume": {"type": "double", "default": 0.5, "min": 0, "max": 1, "summary": "Volume",
                       "description": "From silent to full."},
      "ui.theme": {"type": "string", "default": "light", "choices": ["light", "dark"]},
      "ui.layouts": {"gvariant": "as", "default": ["us"], "choices": ["us", "de", "fr"]},
      "ui.size": {"gvariant": "u", "default": 12, "min": 6, "max": 72},
      "acct.pin": {"type": "string", "secret": true, "maxLength": 8},
      "app.blob": {"type": "data", "maxLength": 16},
      "app.since": {"type": "date"},
      "window.*": {"type": "any", "scope": "local", "summary": "Geometry"},
      "app.cache.*": {"scope": "local", "description": "Never synced"},
      "ui.theme.variant": {"scope": "local"}
    }}
    """#

/// A store under `everyRuleSchema`, with a system default, a lock, values of every kind, a value
/// the schema no longer admits, and history.
func storeUnderEveryRule(_ directory: TemporaryDirectory) throws -> Settings {
    let schemas = directory.file("schemas")
    try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
    try everyRuleSchema.write(toFile: schemas + "/every.json", atomically: true, encoding: .utf8)
    let system = try SystemFolder(
        directory, defaults: ["10.json": #"{"ui.theme": "dark", "free.key": 3}"#], locks: ["ui": "ui.theme\n"]
    )
    var configuration = SettingsConfiguration()
    configuration.policy = try SettingsPolicy.load(
        schemaDirectories: [schemas], systemDirectory: system.path, extensions: .gnome)
    let settings = try Settings(path: directory.database, configuration: configuration)
    try settings.set(0.8, forKey: "audio.volume")
    try settings.set(SettingValue.array(["de", "fr"]), forKey: "ui.layouts")
    try settings.set("1234", forKey: "acct.pin")
    try settings.set(Date(timeIntervalSince1970: 1_700_000_000.25), forKey: "app.since")
    try settings.set(["w": 800, "h": 600] as SettingValue, forKey: "window.main")
    try settings.set("x", forKey: "app.cache.one")
    try settings.set("plain \u{1F600} \"quoted\"", forKey: "free.text")
    try settings.removeValue(forKey: "free.text")
    try settings.set(SettingValue.data(Data([0, 1, 255])), forKey: "free.bytes")
    // A stored value that a tighter schema no longer admits.
    var tighter = settings.policy
    var rule = SchemaRule(key: "free.bytes", type: .string, file: "tighter.json")
    rule.summary = "now a string"
    try tighter.schema.add(rule)
    // A lock on a key that holds a stored value.
    tighter.locks.append(SettingsPolicy.Lock(key: "audio.volume", file: "tighter-lock"))
    settings.apply(tighter)
    return settings
}

@Suite("Typed service results: what the daemon encodes, both conformances decode whole")
struct ServiceCodecTests {
    let directory = TemporaryDirectory()

    /// The keys every test describes: declared, by pattern, scope-only, locked, system defaults,
    /// secret, broken by the schema, and unknown.
    static let keys = [
        "audio.volume", "ui.theme", "ui.layouts", "ui.size", "acct.pin", "app.blob", "app.since",
        "window.main",
        "app.cache.one", "ui.theme.variant", "free.key", "free.text", "free.bytes", "no.such.key",
    ]

    @Test("every key's description reads back equal from its wire form")
    func descriptions() throws {
        let settings = try storeUnderEveryRule(directory)
        var seen: Set<String> = []
        for key in Self.keys {
            let description = KeyDescription(key, in: settings)
            #expect(try KeyDescription(fields: description.fields) == description, "\(key)")
            if description.rule != nil { seen.insert("rule") }
            if description.scopeRule != nil { seen.insert("scopeRule") }
            if description.systemDefault != nil { seen.insert("systemDefault") }
            if description.lockedBy != nil { seen.insert("lock") }
            if description.schemaProblem != nil { seen.insert("problem") }
            if description.rule?.gvariantType != nil { seen.insert("gvariant") }
            if description.rule?.isSecret == true { seen.insert("secret") }
        }
        // The store really has every part, so the round trips above covered them.
        #expect(seen == ["rule", "scopeRule", "systemDefault", "lock", "problem", "gvariant", "secret"])
    }

    @Test("listings, schema entries and history records read back equal")
    func listingsSchemaAndHistory() throws {
        let settings = try storeUnderEveryRule(directory)
        for includeValues in [false, true] {
            for prefix in ["", "app.", "ui.", "none."] {
                let listing = KeyListing(prefix: prefix, includeValues: includeValues, in: settings)
                #expect(try KeyListing(fields: listing.fields) == listing)
            }
        }
        let listing = KeyListing(prefix: "", includeValues: true, in: settings)
        #expect(listing.locked == ["audio.volume"])
        #expect(listing.values?["audio.volume"] == 0.5, "a locked key lists what its lock holds it to")
        let entries = SchemaEntry.all(in: settings)
        // Ten rules of the file, the tighter one, and the built-in machine keys.
        #expect(entries.filter { $0.rule.file.hasSuffix("every.json") }.count == 10)
        #expect(entries.contains { $0.rule.file == "tighter.json" && $0.schemaProblem != nil })
        #expect(try SchemaEntry.entries(in: SchemaEntry.fields(of: entries)) == entries)
        let records = try settings.history(HistoryQuery(limit: 1000))
        #expect(records.count >= 8)
        #expect(records.contains { $0.isRedacted } && records.contains { $0.isDeletion })
        #expect(records.contains { $0.actor != nil })
        for record in records { #expect(try HistoryRecord(json: record.json) == record) }
    }

    @Test("a status with every field set reads back equal, and a newer daemon's fields are kept")
    func status() throws {
        var status = DaemonStatus(replica: .random())
        status.keys = 3
        status.bytes = 120
        status.sequence = 9
        status.historyRecords = 14
        status.clients = 2
        status.watches = 1
        status.database = "/var/lib/settings.sqlite"
        status.socket = "/run/settingsd.sock"
        status.pid = 4242
        status.uptimeSeconds = 12.5
        status.digest = "abc"
        var peer = DaemonStatus.Peer(replica: .random())
        (peer.address, peer.isConnected, peer.connections) = ("/tmp/b.sock", true, 2)
        (peer.pendingOutgoing, peer.pendingIncoming, peer.sentThrough) = (1, 2, 3)
        (peer.acknowledgedThrough, peer.receivedThrough, peer.lastContactMilliseconds) = (4, 5, 6)
        (peer.agreement, peer.repairedKeys, peer.refusedKeys) = ("agreed (1 key refused)", 7, 1)
        (peer.clockOffsetMilliseconds, peer.entriesAheadOfClock) = (-2500, 3)
        status.peers = [peer, DaemonStatus.Peer(replica: .random())]
        status.links = [
            DaemonStatus.Link(address: "/tmp/b.sock", state: "syncing", replica: peer.replica, failures: 0),
            DaemonStatus.Link(address: "/tmp/c.sock", state: "connecting", lastError: "refused", failures: 4),
        ]
        var hub = DaemonStatus.Hub(address: "host=/tmp user=alice")
        (hub.namespace, hub.isConnected, hub.lastContactMilliseconds) = ("fleet", true, 99)
        (hub.pendingUp, hub.pendingDown, hub.agreement, hub.repairedKeys) = (1, 2, "diverged (3 keys)", 4)
        (hub.lastError, hub.mode, hub.pollSeconds) = ("lock timeout", "poll", 0.25)
        (hub.lastRewind, hub.lastAccountChange) = ("counter went back", "moved from a to b")
        (hub.clockOffsetMilliseconds, hub.entriesAheadOfClock) = (7200, 5)
        status.hubs = [hub]
        var dconf = DaemonStatus.Dconf(dirs: ["/org/gnome/"])
        (dconf.isRunning, dconf.keysFromDconf, dconf.keysToDconf, dconf.changeSets) = (true, 1, 2, 3)
        (dconf.lockedPaths, dconf.lastError) = (["/org/gnome/a"], "none")
        status.dconf = dconf
        status.otherFields = ["futureField": .array([.integer(1)])]
        #expect(try DaemonStatus(fields: status.fields) == status)
        let minimal = DaemonStatus(replica: .random())
        #expect(try DaemonStatus(fields: minimal.fields) == minimal)
    }

    @Test("bulk change reports read back under the name each operation counts with")
    func bulkReports() throws {
        let report = BulkChangeReport(count: 5, skippedLocked: ["a.b", "c"])
        for name in ["removed", "imported", "reverted"] {
            #expect(try BulkChangeReport(fields: report.fields(countingAs: name), countingAs: name) == report)
        }
    }

    @Test("malformed answers are refused with the field named, never trapped on")
    func malformed() {
        let cases: [(String, () throws -> Void)] = [
            ("rule", { _ = try SchemaRule(json: .object(["type": "int"])) }),
            ("type", { _ = try SchemaRule(json: .object(["key": "a", "file": "f", "type": "integer"])) }),
            (
                "scopeOnly",
                {
                    _ = try SchemaRule(
                        json: .object(["key": "a", "file": "f", "scopeOnly": .bool(true), "type": "int"]))
                }
            ),
            (
                "scope",
                { _ = try KeyDescription(fields: ["key": "a", "source": "unset", "scope": "everywhere"]) }
            ),
            ("values", { _ = try KeyListing(fields: ["keys": .array([]), "values": .array([])]) }),
            ("version", { _ = try HistoryRecord(json: .object(["key": "a", "version": "x"])) }),
            (
                "replica",
                {
                    _ = try DaemonStatus(fields: [
                        "replica": "nope", "keys": .integer(1), "bytes": .integer(1), "sequence": .integer(1),
                    ])
                }
            ),
            ("keys", { _ = try SchemaEntry.entries(in: ["keys": .object([:])]) }),
        ]
        for (name, decode) in cases {
            #expect(throws: SettingsError.self, "\(name)") { try decode() }
        }
    }
}
