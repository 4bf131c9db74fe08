import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension SyncReliability {
    /// Every administrator feature that meets sync, between two real daemons: what one daemon's
    /// administrator decides must neither crash nor mislead the other, and the other's values must
    /// still travel.
    @Suite("Administrator features between two syncing daemons")
    struct AdministeredSyncTests {
        let directory = TemporaryDirectory()

        /// A pair: `a` administered by `system` (and `schemas`), `b` dialling it.
        private func pair(
            _ system: SystemFolder, schemas: String? = nil, strict: Bool = false
        ) throws -> (a: DaemonProcess, b: DaemonProcess) {
            var administered = ["--system-dir", system.path]
            if let schemas { administered += ["--schemas", schemas] }
            if strict { administered.append("--strict-schemas") }
            let a = try DaemonProcess(
                directory, database: directory.file("a.sqlite"), arguments: administered)
            let b = try DaemonProcess(
                directory, database: directory.file("b.sqlite"),
                arguments: ["--peer", a.socket] + (schemas.map { ["--schemas", $0] } ?? []))
            return (a, b)
        }

        @Test(
            "a locked key written on the peer is kept for others and changes nothing here; the daemon lives")
        func lockedKeyFromPeer() async throws {
            let system = try SystemFolder(
                directory, defaults: ["10.json": #"{"ui.theme": "light"}"#], locks: ["x": "ui.theme\n"])
            let (a, b) = try pair(system)
            #expect(b.cli("set", "other", "x").status == 0)
            #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(b.cli("set", "ui.theme", "dark").status == 0)
            #expect(b.cli("set", "after", "1").status == 0)
            try await waitUntil(timeout: 60) { a.cli("get", "after").output == "1\n" }
            #expect(a.cli("get", "ui.theme").output == "light\n")
            #expect(b.cli("get", "ui.theme").output == "dark\n")
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(try a.status().peers.allSatisfy(\.isConnected))
        }

        @Test("a system default on one daemon is not a value: it is never sent to the other")
        func systemDefaultStaysHome() async throws {
            let system = try SystemFolder(directory, defaults: ["10.json": #"{"ui.theme": "dark"}"#])
            let (a, b) = try pair(system)
            #expect(a.cli("get", "ui.theme").output == "dark\n")
            #expect(a.cli("set", "marker", "1").status == 0)
            try await waitUntil(timeout: 60) { b.cli("get", "marker").output == "1\n" }
            #expect(b.cli("get", "ui.theme").status == 1)
            #expect(b.cli("set", "ui.theme", "light").status == 0)
            try await waitUntil(timeout: 60) { a.cli("get", "ui.theme").output == "light\n" }
        }

        @Test("local-scope keys stay on their daemon and both still agree")
        func localScopeStaysHome() async throws {
            let (a, b) = try pair(try SystemFolder(directory), schemas: exampleSchemaDirectory)
            #expect(a.cli("set", "window.width", "800").status == 0)
            #expect(a.cli("set", "ui.theme", "dark").status == 0)
            try await waitUntil(timeout: 60) { b.cli("get", "ui.theme").output == "dark\n" }
            #expect(b.cli("get", "window.width").status == 1)
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        }

        @Test("a local-scope write, last on either side, leaves both agreed: sync --wait passes on each")
        func localScopeWriteKeepsAgreement() async throws {
            let (a, b) = try pair(try SystemFolder(directory), schemas: exampleSchemaDirectory)
            #expect(a.cli("set", "ui.theme", "dark").status == 0)
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
            // Whichever side starts comparisons, the other's local write must not leave it waiting.
            for (index, node) in [a, b].enumerated() {
                #expect(node.cli("set", "window.width", "\(800 + index)").status == 0)
                let wait = node.cli("sync", "--wait", "--timeout", "5")
                #expect(wait.status == 0, "side \(index): \(wait.error)")
            }
        }

        @Test(
            "a leaf without the relay's schema shares keys the relay keeps local: the relay refuses them, both agree and say so"
        )
        func leafWithoutTheRelaysSchema() async throws {
            let relay = try DaemonProcess(
                directory, database: directory.file("relay.sqlite"),
                arguments: ["--schemas", exampleSchemaDirectory])
            let leaf = try DaemonProcess(
                directory, database: directory.file("leaf.sqlite"), arguments: ["--peer", relay.socket])
            #expect(leaf.cli("set", "window.width", "800").status == 0)
            #expect(leaf.cli("set", "ui.theme", "dark").status == 0)
            #expect(relay.cli("set", "window.width", "1024").status == 0)
            for node in [relay, leaf] {
                let wait = node.cli("sync", "--wait", "--timeout", "10")
                #expect(wait.status == 0, "\(wait.error)")
            }
            #expect(relay.cli("get", "window.width").output == "1024\n")
            #expect(relay.cli("get", "ui.theme").output == "dark\n")
            #expect(try relay.status().peers.first?.agreement == "agreed (1 key refused)")
            // A newer version, and then a deletion, of the leaf's key keep the pair agreed.
            #expect(leaf.cli("set", "window.width", "640").status == 0)
            #expect(relay.cli("sync", "--wait", "--timeout", "10").status == 0)
            #expect(leaf.cli("delete", "window.width").status == 0)
            for node in [relay, leaf] {
                let wait = node.cli("sync", "--wait", "--timeout", "10")
                #expect(wait.status == 0, "\(wait.error)")
            }
            #expect(relay.cli("get", "window.width").output == "1024\n")
        }

        @Test("strict schemas on one daemon refuse undeclared keys from the peer without dropping the link")
        func strictSchemasAgainstPeer() async throws {
            let (a, b) = try pair(try SystemFolder(directory), schemas: exampleSchemaDirectory, strict: true)
            #expect(b.cli("set", "undeclared.key", "1").status == 0)
            #expect(b.cli("set", "ui.theme", "dark").status == 0)
            try await waitUntil(timeout: 60) { a.cli("get", "ui.theme").output == "dark\n" }
            #expect(a.cli("get", "undeclared.key").status == 1)
            #expect(try a.status().peers.allSatisfy(\.isConnected))
            // The refused key is the pair's only difference: they agree, and say so honestly.
            #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
            #expect(try a.status().peers.first?.agreement == "agreed (1 key refused)")
            #expect(a.cli("status").output.contains("agreed (1 key refused)"))
        }
    }
}
