import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// The live dconf bridge (`settingsd run --dconf`), against real `dconf-service` sessions.
@Suite(
    "dconf bridge: GNOME settings mirrored both ways, live",
    .enabled(if: DconfSession.isAvailable, "needs dbus, dconf-service, dconf-cli and libglib2.0-bin"),
    .enabled(if: DconfSession.hasDesktopSchemas, "needs gsettings-desktop-schemas")
)
struct DconfBridgeTests {
    @Test(
        "the three-way decision: the side that changed since both agreed wins; a new key keeps the store's state"
    )
    func decisionTable() {
        typealias D = BridgeDecision
        #expect(D.decide(dconf: "s 'a'", store: "s 'a'", storeHoldsEntry: true, base: nil) == .agree)
        #expect(
            D.decide(dconf: "s 'b'", store: "s 'a'", storeHoldsEntry: true, base: .some("s 'a'"))
                == .takeFromDconf)
        #expect(
            D.decide(dconf: nil, store: "s 'a'", storeHoldsEntry: true, base: .some("s 'a'"))
                == .takeFromDconf)
        #expect(
            D.decide(dconf: "s 'a'", store: "s 'b'", storeHoldsEntry: true, base: .some("s 'a'"))
                == .writeToDconf)
        #expect(
            D.decide(dconf: "s 'a'", store: nil, storeHoldsEntry: true, base: .some("s 'a'")) == .writeToDconf
        )
        // Both changed while apart: the change seen on this machine is the newer.
        #expect(
            D.decide(dconf: "s 'c'", store: "s 'b'", storeHoldsEntry: true, base: .some("s 'a'"))
                == .takeFromDconf)
        // Never bridged: a state the store holds (value or deletion) wins; else dconf's is taken.
        #expect(D.decide(dconf: "s 'x'", store: "s 'a'", storeHoldsEntry: true, base: nil) == .writeToDconf)
        #expect(D.decide(dconf: "s 'x'", store: nil, storeHoldsEntry: true, base: nil) == .writeToDconf)
        #expect(D.decide(dconf: "s 'x'", store: nil, storeHoldsEntry: false, base: nil) == .takeFromDconf)
        #expect(D.decide(dconf: nil, store: "s 'a'", storeHoldsEntry: true, base: nil) == .writeToDconf)
        #expect(D.decide(dconf: nil, store: nil, storeHoldsEntry: true, base: .some(nil)) == .agree)
        #expect(D.canonical(.uint32(7)) == "u 7")
        #expect(D.canonical(nil) == nil)
    }

    @Test(
        "gsettings set reaches the store, the CLI reaches gsettings with the schema's type, a reset deletes")
    func oneMachineBothWays() async throws {
        let machine = try await DconfMachine("one")
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Adwaita-dark")
                .status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.gtk-theme") == "Adwaita-dark" }

        let set = machine.cli("set", "org.gnome.desktop.peripherals.keyboard.repeat-interval", "25")
        #expect(set.status == 0, "\(set.error)")
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.peripherals.keyboard", "repeat-interval") == "uint32 25"
        }
        #expect(
            machine.session.dconf("read", "/org/gnome/desktop/peripherals/keyboard/repeat-interval").output
                == "uint32 25\n")

        #expect(machine.session.gsettings("reset", "org.gnome.desktop.interface", "gtk-theme").status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.gtk-theme") == nil }
        let history = machine.cli("history", "org.gnome.desktop.interface.gtk-theme")
        #expect(history.output.contains("deleted") || history.output.contains("removed"), "\(history.output)")
        // gsettings wrote it, through dconf: the history says dconf, not the daemon.
        let lines = history.output.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.contains(" dconf ") }, "\(history.output)")

        // A revert in the store is written to dconf like any change.
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "icon-theme", "Before").status
                == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.icon-theme") == "Before" }
        let between = Int(Date().timeIntervalSince1970 * 1000) + 1
        try await Task.sleep(for: .milliseconds(5))
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "icon-theme", "After").status == 0
        )
        try await waitUntil { machine.get("org.gnome.desktop.interface.icon-theme") == "After" }
        #expect(
            machine.cli(
                "revert", "org.gnome.desktop.interface.icon-theme", "--before",
                String(format: "%.3f", Double(between) / 1000)
            ).status == 0)
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.interface", "icon-theme") == "'Before'"
        }

        // A key the schema types otherwise is refused by the store and never reaches dconf.
        #expect(
            machine.cli("set", "org.gnome.desktop.peripherals.keyboard.repeat-interval", "fast").status != 0)
        #expect(
            machine.gsettings(get: "org.gnome.desktop.peripherals.keyboard", "repeat-interval") == "uint32 25"
        )
        // Nothing the bridge wrote came back as a change from dconf.
        let status = try machine.bridge()
        #expect(status.keysFromDconf == 4)
        #expect(status.keysToDconf == 2)
        #expect(status.isRunning)
        #expect(status.lastError == nil)
    }

    @Test("a thousand keys each way are written as a few change sets and never bounce back")
    func noEcho() async throws {
        let machine = try await DconfMachine("echo")
        var document: [String: JSONValue] = [:]
        for index in 0..<1_000 {
            document["org.gnome.settingsd-test.store.key\(index)"] = .integer(Int64(index))
        }
        let file = machine.session.directory.file("import.json")
        try JSONValue.object([
            "format": "settingsd-export", "version": .integer(1), "values": .object(document),
        ])
        .serialized().write(toFile: file, atomically: true, encoding: .utf8)
        let imported = machine.cli("import", file)
        #expect(imported.status == 0, "\(imported.error)")
        try await waitUntil { try machine.bridge().keysToDconf == 1_000 }
        let dump = machine.session.dconf("dump", "/org/gnome/settingsd-test/store/").output
        #expect(dump.split(separator: "\n").filter { $0.hasPrefix("key") }.count == 1_000)
        #expect(dump.contains("key999=999"))

        var keyfile = "[/]\n"
        for index in 0..<1_000 { keyfile += "key\(index)='v\(index)'\n" }
        #expect(machine.session.dconf("load", "/org/gnome/settingsd-test/dconf/", input: keyfile).status == 0)
        try await waitUntil { machine.get("org.gnome.settingsd-test.dconf.key999") == "v999" }
        try await waitUntil { try machine.bridge().keysFromDconf == 1_000 }
        let status = try machine.bridge()
        #expect(status.keysToDconf == 1_000, "a key taken from dconf was written back")
        #expect(status.changeSets < 100, "\(status.changeSets) change sets for one import")
    }

    @Test(
        "what changed in dconf while the daemon was down (killed, or stopped) is taken at start; nothing is lost"
    )
    func restartTakesWhatChanged() async throws {
        let machine = try await DconfMachine("restart")
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Yaru").status == 0)
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "32").status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.cursor-size") == "32" }
        machine.crash()
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Adwaita").status
                == 0)
        #expect(machine.session.gsettings("reset", "org.gnome.desktop.interface", "cursor-size").status == 0)
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "clock-format", "'12h'").status
                == 0)
        // And the store changed while the daemon was away (`--db`, as an administrator would).
        #expect(
            DaemonProcess.run([
                "set", "org.gnome.desktop.interface.font-name", "Cantarell 12", "--db", machine.database,
            ])
            .status == 0)
        try machine.start()
        #expect(machine.get("org.gnome.desktop.interface.gtk-theme") == "Adwaita")
        #expect(machine.get("org.gnome.desktop.interface.cursor-size") == nil)
        #expect(machine.get("org.gnome.desktop.interface.clock-format") == "12h")
        #expect(machine.gsettings(get: "org.gnome.desktop.interface", "font-name") == "'Cantarell 12'")
        // Keys that agreed before and after are left alone.
        #expect(try machine.bridge().keysFromDconf == 3)
        #expect(try machine.bridge().keysToDconf == 1)

        // Killed while a stream of single writes arrives: each is taken live or at the restart.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = [
            "-c", "for i in $(seq 1 150); do dconf write /org/gnome/settingsd-test/stream/k$i $i; done",
        ]
        writer.environment = machine.session.environment
        try writer.run()
        try await waitUntil { machine.get("org.gnome.settingsd-test.stream.k20") != nil }
        machine.crash()
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        try machine.start()
        let listed = machine.cli("list", "org.gnome.settingsd-test.stream.").output
        for index in 1...150 {
            #expect(
                listed.contains("org.gnome.settingsd-test.stream.k\(index) = \(index)\n"),
                "k\(index) was lost")
        }
    }

    @Test("site defaults are never taken as the user's, and keys the site locks are not written")
    func siteDefaultsAndLocks() async throws {
        let site = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: site.file("site.d/locks"), withIntermediateDirectories: true)
        try "[org/gnome/desktop/interface]\nclock-format='12h'\nfont-name='Site Sans 11'\n".write(
            toFile: site.file("site.d/00-site"), atomically: true, encoding: .utf8)
        try "/org/gnome/desktop/interface/clock-format\n".write(
            toFile: site.file("site.d/locks/00-locks"), atomically: true, encoding: .utf8)
        let compile = DaemonProcess.run(
            ["compile", site.file("site.db"), site.file("site.d")], through: "/usr/bin/dconf")
        #expect(compile.status == 0, "\(compile.error)")
        let machine = try await DconfMachine(
            "site", profile: "user-db:user\nfile-db:\(site.file("site.db"))\n")
        #expect(machine.gsettings(get: "org.gnome.desktop.interface", "font-name") == "'Site Sans 11'")
        #expect(machine.get("org.gnome.desktop.interface.font-name") == nil)
        #expect(machine.get("org.gnome.desktop.interface.clock-format") == nil)

        #expect(machine.cli("set", "org.gnome.desktop.interface.clock-format", "24h").status == 0)
        try await waitUntil {
            try machine.bridge().lockedPaths == ["/org/gnome/desktop/interface/clock-format"]
        }
        #expect(machine.gsettings(get: "org.gnome.desktop.interface", "clock-format") == "'12h'")
        let status = machine.cli("status")
        #expect(status.output.contains("/org/gnome/desktop/interface/clock-format"), "\(status.output)")
    }

    @Test("dconf audit lists the mirrored keys busiest first, with their scope and the rule that set it")
    func audit() async throws {
        let machine = try await DconfMachine("audit")
        for (index, size) in ["(800, 600)", "(1024, 768)", "(1280, 720)"].enumerated() {
            #expect(machine.session.dconf("write", "/org/gnome/example/window-size", size).status == 0)
            try await waitUntil { try machine.bridge().keysFromDconf == index + 1 }
        }
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Yaru").status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.gtk-theme") == "Yaru" }
        let audit = machine.cli("dconf", "audit")
        #expect(audit.status == 0, "\(audit.error)")
        let lines = audit.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "changes/24h  scope   key")
        #expect(
            lines.dropFirst().first
                == "          3  local   org.gnome.example.window-size  (org.gnome.*.window-size, (built in) machine-keys.json)",
            "\(audit.output)")
        #expect(
            lines.contains("          1  synced  org.gnome.desktop.interface.gtk-theme"), "\(audit.output)")
        let json = machine.cli("dconf", "audit", "/org/gnome/desktop/", "--json")
        #expect(json.status == 0)
        let rows = try JSONValue.parse(Array(json.output.utf8))
        #expect(
            rows
                == .array([
                    .object([
                        "key": "org.gnome.desktop.interface.gtk-theme", "changesLastDay": .integer(1),
                        "scope": "synced", "scopeFile": .null,
                    ])
                ]))

        let plain = try DaemonProcess(TemporaryDirectory())
        let refused = plain.cli("dconf", "audit")
        #expect(refused.status == 64)
        #expect(refused.error.contains("the daemon mirrors no dconf dir"), "\(refused.error)")
        #expect(plain.cli("dconf", "inspect").status == 64)
    }

    @Test(
        "a key the administrator locks in locks.d is held in dconf at its system default, whatever the user writes"
    )
    func administratorLocksHoldDconf() async throws {
        let system = TemporaryDirectory()
        for folder in ["defaults.d", "locks.d"] {
            try FileManager.default.createDirectory(
                atPath: system.file(folder), withIntermediateDirectories: true)
        }
        try #"{"org.gnome.desktop.interface.gtk-theme": "Managed"}"#.write(
            toFile: system.file("defaults.d/gnome.json"), atomically: true, encoding: .utf8)
        try "org.gnome.desktop.interface.gtk-theme\norg.gnome.desktop.interface.cursor-size\n".write(
            toFile: system.file("locks.d/gnome"), atomically: true, encoding: .utf8)
        let machine = try await DconfMachine(
            "managed", arguments: ["--system-dir", system.path], starting: false)
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "64").status == 0)
        try machine.start()
        #expect(machine.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Managed'")
        #expect(machine.session.dconf("read", "/org/gnome/desktop/interface/cursor-size").output.isEmpty)
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Escape").status == 0
        )
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Managed'"
        }
        let history = machine.cli("history", "org.gnome.desktop.interface.gtk-theme", "--json")
        #expect(
            history.status == 0 && history.output.isEmpty, "the user's attempt was stored: \(history.output)")
        // An unlocked key next to them is the user's as ever.
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "icon-theme", "Mine").status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.icon-theme") == "Mine" }
    }
}
