import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    @Suite("SettingsService: a daemon over its socket and a database in process answer alike")
    struct ServiceConformanceTests {
        let directory = TemporaryDirectory()

        /// Everything the command line reads from a service, typed.
        struct Answers: Equatable {
            var descriptions: [KeyDescription] = []
            var listings: [KeyListing] = []
            var schema: [SchemaEntry] = []
            var history: [HistoryRecord] = []
            var export: ExportDocument?
            var values: [SettingValue?] = []

            init(_ service: any SettingsService) throws {
                for key in ServiceCodecTests.keys {
                    descriptions.append(try service.describe(key))
                    values.append(try service.value(forKey: key))
                }
                for prefix in ["", "ui.", "app."] {
                    listings.append(try service.list(prefix: prefix, includeValues: true))
                    listings.append(try service.list(prefix: prefix, includeValues: false))
                }
                schema = try service.schemaEntries()
                history = try service.history(HistoryQuery(limit: 1000))
                export = try service.export()
            }
        }

        @Test("describe, get, list, schema, history and export answer the same typed results on both paths")
        func readsAnswerAlike() throws {
            try storeUnderEveryRule(directory).close()
            let arguments = ["--schemas", directory.file("schemas"), "--system-dir", directory.file("etc")]
            let daemon = try DaemonProcess(directory, arguments: arguments)
            let overSocket = try Answers(daemon.client())
            let status = try daemon.client().status()
            #expect(daemon.terminate() == 0)

            var configuration = SettingsConfiguration()
            configuration.policy = try SettingsPolicy.load(
                schemaDirectories: [directory.file("schemas")], systemDirectory: directory.file("etc"),
                extensions: .gnome)
            let direct = DirectClient(
                settings: try Settings(path: directory.database, configuration: configuration))
            let inProcess = try Answers(direct)
            #expect(overSocket == inProcess)
            #expect(overSocket.descriptions.contains { $0.lockedBy != nil && $0.systemDefault != nil })
            #expect(overSocket.history.count >= 8)
            let local = try direct.status()
            #expect(
                local.digest == status.digest && local.sequence == status.sequence
                    && local.keys == status.keys)
            #expect(status.socket == daemon.socket && local.socket == nil)
        }

        @Test("writes through either path report alike: reset, import, revert and delete")
        func writesReportAlike() throws {
            func run(_ service: any SettingsService) throws -> [BulkChangeReport] {
                try service.set("a", forKey: "w.one")
                try service.set("b", forKey: "w.two")
                let removed = try service.removeValue(forKey: "w.two")
                let again = try service.removeValue(forKey: "w.two")
                #expect(removed && !again)
                let imported = try service.importDocument(
                    ExportDocument(values: ["w.three": 3, "w.four": 4]), replacingExisting: false)
                let version = try #require(
                    try service.history(HistoryQuery(keyOrPrefix: "w.one", limit: 1)).first)
                try service.set("changed", forKey: "w.one")
                try service.revert("w.one", to: version.version)
                #expect(try service.value(forKey: "w.one") == "a")
                let reset = try service.reset("w.")
                #expect(try service.list(prefix: "w.", includeValues: false).keys.isEmpty)
                return [imported, reset]
            }
            let daemon = try DaemonProcess(directory)
            let overSocket = try run(daemon.client())
            let other = TemporaryDirectory()
            let direct = DirectClient(settings: try Settings(path: other.database))
            #expect(try run(direct) == overSocket)
            #expect(
                overSocket == [
                    BulkChangeReport(count: 2, skippedLocked: []),
                    BulkChangeReport(count: 3, skippedLocked: []),
                ])
        }
    }
}
