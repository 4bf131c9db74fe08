import Foundation
import Synchronization
import Testing

@testable import SettingsFoundation
@testable import SettingsStore

/// The hub's fleet policies as a store composes and applies them, without a hub.
@Suite("Fleet policy: levels, targets, the machine's own files, the schema, peers and restarts")
struct FleetPolicyTests {
    let directory = TemporaryDirectory()

    private func assignment(
        _ name: String, revision: Int64 = 1, target: PolicyAssignment.Target = .group("staff"),
        _ keys: [String: (SettingValue, PolicyDocument.Level)]
    ) -> PolicyAssignment {
        PolicyAssignment(
            name: name, revision: revision, target: target,
            document: PolicyDocument(keys: keys.mapValues { PolicyDocument.Entry(value: $0.0, level: $0.1) }))
    }

    @Test(
        "mandatory wins over a recommended value of any target, and a machine target over a group at one level"
    )
    func precedence() throws {
        let settings = Settings(inMemoryWith: .init())
        let machine = PolicyAssignment.Target.machine(settings.replicaID)
        try settings.applyFleetPolicy(
            [
                assignment(
                    "a-group", ["k1": (1, .mandatory), "k2": (1, .recommended), "k3": (1, .mandatory)]),
                assignment("b-machine", target: machine, ["k1": (2, .recommended), "k2": (2, .recommended)]),
                assignment("c-lab", target: .machineGroup("lab"), ["k3": (3, .mandatory)]),
            ], from: "hub")
        #expect(settings.value(forKey: "k1") == 1)
        #expect(settings.value(forKey: "k2") == 2)
        #expect(settings.value(forKey: "k3") == 3)
        #expect(settings.source(ofKey: "k3") == .mandatoryPolicy(name: "c-lab", revision: 1))
        #expect(settings.source(ofKey: "k2") == .recommendedPolicy(name: "b-machine", revision: 1))
    }

    @Test(
        "the machine's own files win: a lock over a mandatory value, a system default over a recommended one")
    func localAdministratorWins() throws {
        let system = try SystemFolder(
            directory, defaults: ["site.json": #"{"ui.font": "Site Sans"}"#], locks: ["site": "ui.theme\n"])
        let settings = Settings(inMemoryWith: .init())
        settings.apply(try SettingsPolicy.load(schemaDirectories: [], systemDirectory: system.path))
        try settings.applyFleetPolicy(
            [assignment("p", ["ui.theme": ("dark", .mandatory), "ui.font": ("Inter", .recommended)])],
            from: "hub")
        #expect(settings.source(ofKey: "ui.theme") == .locked(file: system.path + "/locks.d/site"))
        #expect(settings.value(forKey: "ui.font") == "Site Sans")
        // The layers under the winner are what `get --explain` lists as overridden.
        #expect(settings.layers(ofKey: "ui.font").map(\.source).count == 2)
    }

    @Test(
        "a user's write to a mandatory key is refused, a peer's is kept but does not show, removal brings it back"
    )
    func userAndPeerUnderMandatory() throws {
        let settings = Settings(inMemoryWith: .init())
        try settings.set("light", forKey: "ui.theme")
        try settings.applyFleetPolicy([assignment("p", ["ui.theme": ("dark", .mandatory)])], from: "hub")
        #expect(settings.value(forKey: "ui.theme") == "dark")
        let refused = #expect(throws: SettingsError.self) { try settings.set("blue", forKey: "ui.theme") }
        #expect(refused?.code == .locked)
        #expect(refused?.message.contains("hub's policy 'p'") == true)
        #expect(settings.lockingFile(forKey: "ui.theme") == "hub policy 'p' (revision 1)")
        let peer = ReplicaID.random()
        let version = SettingVersion(
            timestamp: HybridTimestamp(
                milliseconds: UInt64(Date().timeIntervalSince1970 * 1000) + 1000, counter: 0),
            replica: peer)
        let outcome = try settings.applyRemote(
            [SettingEntry(key: "ui.theme", value: "from-peer", version: version, sequence: 1)], from: peer,
            through: 1, reason: .replica)
        #expect(outcome.applied == 1)
        #expect(settings.storedValue(forKey: "ui.theme") == "from-peer")
        #expect(settings.value(forKey: "ui.theme") == "dark")
        try settings.applyFleetPolicy([], from: "hub")
        #expect(settings.value(forKey: "ui.theme") == "from-peer")
        #expect(settings.fleetPolicy.isEmpty)
    }

    @Test("a key the schema refuses is refused and reported; the rest of its policy applies")
    func schemaRefusesOneKey() throws {
        let schemas = directory.file("schemas")
        try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
        try
            #"{"format": "settingsd-schema", "version": 1, "keys": {"ui.size": {"type": "int", "min": 1, "max": 10}}}"#
            .write(toFile: schemas + "/ui.json", atomically: true, encoding: .utf8)
        let settings = Settings(inMemoryWith: .init())
        settings.apply(try SettingsPolicy.load(schemaDirectories: [schemas], systemDirectory: nil))
        let applied = try settings.applyFleetPolicy(
            [assignment("p", ["ui.size": (50, .mandatory), "ui.name": ("x", .mandatory)])], from: "hub")
        #expect(applied.refusals.map(\.key) == ["ui.size"])
        #expect(settings.value(forKey: "ui.size") == nil)
        #expect(settings.value(forKey: "ui.name") == "x")
        let report = settings.fleetPolicyReport()
        #expect(report.revisions == ["p": 1])
        #expect(report.refusals.count == 1)
        // A schema that allows it later lets the same policy apply whole.
        try #"{"format": "settingsd-schema", "version": 1, "keys": {"ui.size": {"type": "int", "max": 100}}}"#
            .write(toFile: schemas + "/ui.json", atomically: true, encoding: .utf8)
        settings.apply(try SettingsPolicy.load(schemaDirectories: [schemas], systemDirectory: nil))
        #expect(settings.value(forKey: "ui.size") == 50)
    }

    @Test("a revision is one change with reason system; the same assignments again announce nothing")
    func oneChangePerRevision() throws {
        let settings = Settings(inMemoryWith: .init())
        let seen = Mutex<[SettingsChange]>([])
        let token = settings.observe(.all) { change in seen.withLock { $0.append(change) } }
        defer { token.cancel() }
        try settings.applyFleetPolicy(
            [assignment("p", ["a": (1, .mandatory), "b": (1, .recommended)])], from: "hub")
        try settings.applyFleetPolicy(
            [assignment("p", ["a": (1, .mandatory), "b": (1, .recommended)])], from: "hub")
        let changes = seen.withLock { $0 }
        #expect(changes.count == 1)
        #expect(changes.first?.reason == .system)
        #expect(changes.first?.changes.map(\.key).sorted() == ["a", "b"])
    }

    @Test("the recorded assignments apply again after a restart, before any hub answers")
    func recordedAcrossRestart() throws {
        let file = directory.file("store.sqlite")
        do {
            let settings = try Settings(path: file)
            try settings.applyFleetPolicy(
                [assignment("p", revision: 4, ["ui.theme": ("dark", .mandatory)])], from: "hub")
        }
        let reopened = try Settings(path: file)
        #expect(reopened.value(forKey: "ui.theme") == nil)
        #expect(try reopened.applyRecordedFleetPolicy(from: "hub") == 1)
        #expect(reopened.source(ofKey: "ui.theme") == .mandatoryPolicy(name: "p", revision: 4))
        #expect(try reopened.applyRecordedFleetPolicy(from: "another hub") == 0)
    }

    @Test("UserDefaults' objectIsForced says a mandatory key is set by the organisation")
    func objectIsForced() throws {
        let settings = Settings(inMemoryWith: .init())
        let defaults = try #require(SettingsDefaults(settings: settings, suiteName: nil))
        try settings.applyFleetPolicy(
            [assignment("p", [defaults.prefix + "proxy": ("http://proxy", .mandatory)])], from: "hub")
        #expect(defaults.objectIsForced(forKey: "proxy"))
        #expect(defaults.string(forKey: "proxy") == "http://proxy")
        #expect(!defaults.objectIsForced(forKey: "other"))
    }

    @Test(
        "policy files with a wrong format, an unknown field, a missing value, an unknown level or an invalid key are refused with the reason",
        arguments: [
            (#"{"format": "other", "version": 1, "keys": {}}"#, "format"),
            (#"{"format": "settingsd-policy", "version": 2, "keys": {}}"#, "version"),
            (
                #"{"format": "settingsd-policy", "version": 1, "keys": {}, "extra": 1}"#,
                "unknown field 'extra'"
            ),
            (
                #"{"format": "settingsd-policy", "version": 1, "keys": {"a": {"level": "mandatory"}}}"#,
                "'value'"
            ),
            (
                #"{"format": "settingsd-policy", "version": 1, "keys": {"a": {"value": 1, "level": "forced"}}}"#,
                "level 'forced'"
            ),
            (
                #"{"format": "settingsd-policy", "version": 1, "keys": {"": {"value": 1, "level": "mandatory"}}}"#,
                "key"
            ),
            (
                #"{"format": "settingsd-policy", "version": 1, "keys": {"a": {"value": 1, "level": "mandatory", "x": 2}}}"#,
                "'x'"
            ),
            ("not json", "policy p.json"),
        ])
    func malformedDocuments(text: String, reason: String) {
        let error = #expect(throws: SettingsError.self) {
            try PolicyDocument(parsing: Array(text.utf8), file: "p.json")
        }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.message.hasPrefix("policy p.json: ") == true)
    }

    @Test("a document prints as it reads, and targets read back from their text")
    func roundTrips() throws {
        let document = PolicyDocument(keys: [
            "b": .init(value: [1, 2], level: .recommended), "a": .init(value: "x", level: .mandatory),
        ])
        #expect(try PolicyDocument(parsing: Array(document.text.utf8), file: "f") == document)
        let replica = ReplicaID.random()
        for target in [PolicyAssignment.Target.group("staff"), .machineGroup("lab"), .machine(replica)] {
            #expect(try PolicyAssignment.Target(parsing: target.description) == target)
        }
        #expect(try PolicyAssignment.Target(parsing: "staff") == .group("staff"))
        #expect(throws: SettingsError.self) { try PolicyAssignment.Target(parsing: "machine:not-an-id") }
        #expect(throws: SettingsError.self) { try PolicyAssignment.Target(parsing: "rack:r1") }
    }
}
