import Foundation
import PostgresFixture
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

/// GNOME settings following a user across machines: each machine a private dconf session and a
/// daemon bridging it, all on one namespace of a real PostgreSQL hub.
@Suite(
    "dconf bridge through the hub: two machines, a third joining",
    .enabled(if: DconfSession.isAvailable, "needs dbus, dconf-service, dconf-cli and libglib2.0-bin"),
    .enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (apt-get install postgresql)"),
    .enabled(if: DconfSession.hasDesktopSchemas, "needs gsettings-desktop-schemas")
)
struct DconfHubTests {
    /// A namespace of its own on the shared cluster.
    private static func namespace() throws -> String {
        let cluster = try PostgresCluster.shared()
        _ = try HubAdministration.initialize(url: cluster.conninfo())
        let role = try cluster.makeRole("gnome")
        return cluster.conninfo(user: role.name, password: role.password)
    }

    @Test(
        "gsettings on A reaches gsettings on B with its type; a reset travels; a window size stays; a locked key is left alone"
    )
    func twoMachines() async throws {
        let hub = try Self.namespace()
        let site = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: site.file("site.d/locks"), withIntermediateDirectories: true)
        try "[org/gnome/desktop/interface]\nclock-format='24h'\n".write(
            toFile: site.file("site.d/00-site"), atomically: true, encoding: .utf8)
        try "/org/gnome/desktop/interface/clock-format\n".write(
            toFile: site.file("site.d/locks/00-locks"), atomically: true, encoding: .utf8)
        #expect(
            DaemonProcess.run(
                ["compile", site.file("site.db"), site.file("site.d")], through: "/usr/bin/dconf"
            )
            .status == 0)
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine(
            "b", hub: hub, profile: "user-db:user\nfile-db:\(site.file("site.db"))\n")
        #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "20").status == 0)
        // The trip's time is the benchmark's to measure (`settings-bench dconf`: p50 ~30 ms); under
        // the whole suite's load on two cores it has taken up to 5 s, so the test waits for it.
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Adwaita-dark").status == 0
        )
        try await waitUntil {
            b.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Adwaita-dark'"
        }

        #expect(
            a.session.gsettings("set", "org.gnome.desktop.wm.keybindings", "close", "['<Super>q', '<Alt>F4']")
                .status == 0)
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.peripherals.keyboard", "delay", "uint32 300").status
                == 0)
        #expect(a.session.dconf("write", "/org/gnome/example/window-size", "(1280, 720)").status == 0)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "clock-format", "12h").status == 0)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "48").status == 0)
        try await waitUntil { b.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "48" }
        #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
        try await waitUntil {
            b.session.dconf("read", "/org/gnome/desktop/wm/keybindings/close").output
                == "['<Super>q', '<Alt>F4']\n"
                && b.session.dconf("read", "/org/gnome/desktop/peripherals/keyboard/delay").output
                    == "uint32 300\n"
        }
        // Machine-specific: kept on A, never sent.
        #expect(a.get("org.gnome.example.window-size") != nil)
        #expect(b.session.dconf("read", "/org/gnome/example/window-size").output.isEmpty)
        #expect(b.get("org.gnome.example.window-size") == nil)
        // Locked by B's site: B's store has A's value, B's dconf keeps the site's.
        #expect(b.get("org.gnome.desktop.interface.clock-format") == "12h")
        #expect(b.gsettings(get: "org.gnome.desktop.interface", "clock-format") == "'24h'")
        #expect(try b.bridge().lockedPaths == ["/org/gnome/desktop/interface/clock-format"])

        #expect(b.session.gsettings("reset", "org.gnome.desktop.interface", "gtk-theme").status == 0)
        try await waitUntil {
            a.session.dconf("read", "/org/gnome/desktop/interface/gtk-theme").output.isEmpty
        }
        #expect(a.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Adwaita'")

        // Nothing echoed: A took its own changes from dconf and wrote only B's reset back.
        #expect(try a.bridge().keysToDconf == 1)
        #expect(try b.bridge().keysFromDconf == 1)
    }

    @Test(
        "both machines changed while apart converge by version; a fresh machine receives all and pushes nothing"
    )
    func apartThenJoin() async throws {
        let hub = try Self.namespace()
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine("b", hub: hub)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "One").status == 0)
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.interface", "font-name", "Cantarell 14").status == 0
        )
        try await waitUntil {
            b.gsettings(get: "org.gnome.desktop.interface", "font-name") == "'Cantarell 14'"
        }

        a.stop()
        b.stop()
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "From-A").status == 0)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "40").status == 0)
        #expect(b.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "From-B").status == 0)
        #expect(b.session.gsettings("reset", "org.gnome.desktop.interface", "font-name").status == 0)
        try a.start()
        try b.start()
        try await waitUntil {
            a.gsettings(get: "org.gnome.desktop.interface", "gtk-theme")
                == b.gsettings(get: "org.gnome.desktop.interface", "gtk-theme")
                && b.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "40"
                && a.session.dconf("read", "/org/gnome/desktop/interface/font-name").output.isEmpty
        }
        // B started last, so its change is the newer.
        #expect(a.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'From-B'")

        let c = try await DconfMachine("c", hub: hub)
        try await waitUntil {
            c.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'From-B'"
                && c.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "40"
        }
        #expect(c.cli("sync", "--wait", "--timeout", "30").status == 0)
        #expect(try c.bridge().keysFromDconf == 0, "the fresh machine pushed what it did not change")
        let history = a.cli("history", "org.gnome.desktop.interface.", "--json")
        let replicaC = try #require(try c.daemon?.status().replica.description)
        #expect(history.status == 0 && history.output.contains("\"replica\""), "\(history.output)")
        #expect(!history.output.contains(replicaC))
    }

    @Test("a thousand changes on A are a thousand dconf writes on B, and none comes back to A")
    func thousandChangesNoEcho() async throws {
        let hub = try Self.namespace()
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine("b", hub: hub)
        var keyfile = "[/]\n"
        for index in 0..<1_000 { keyfile += "key\(index)=\(index)\n" }
        #expect(a.session.dconf("load", "/org/gnome/settingsd-test/burst/", input: keyfile).status == 0)
        try await waitUntil(timeout: 60) { try b.bridge().keysToDconf == 1_000 }
        #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        let dump = b.session.dconf("dump", "/org/gnome/settingsd-test/burst/").output
        #expect(dump.split(separator: "\n").filter { $0.hasPrefix("key") }.count == 1_000)
        #expect(dump.contains("key999=999"))
        #expect(try a.bridge().keysFromDconf == 1_000)
        #expect(try a.bridge().keysToDconf == 0, "B's writes came back to A")
        #expect(try b.bridge().keysFromDconf == 0, "B took its own writes back from dconf")
    }

    @Test("both machines changed while the hub was out of reach: they converge by version, a reset included")
    func hubOutage() async throws {
        let cluster = try PostgresCluster.shared()
        _ = try HubAdministration.initialize(url: cluster.conninfo())
        let role = try cluster.makeRole("gnome")
        let hub = cluster.conninfo(user: role.name, password: role.password)
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine("b", hub: hub)
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.interface", "font-name", "Cantarell 14").status == 0
        )
        try await waitUntil {
            b.gsettings(get: "org.gnome.desktop.interface", "font-name") == "'Cantarell 14'"
        }

        // The hub refuses both machines: their role may no longer log in, its sessions are ended.
        try cluster.psql(
            "ALTER ROLE \(role.name) NOLOGIN; SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(role.name)';"
        )
        try await waitUntil(timeout: 60) {
            try [a, b].allSatisfy { machine in try machine.daemon?.status().hubs.first?.isConnected == false }
        }
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "From-A").status == 0)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "40").status == 0)
        try await waitUntil { a.get("org.gnome.desktop.interface.cursor-size") == "40" }
        #expect(b.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "From-B").status == 0)
        #expect(b.session.gsettings("reset", "org.gnome.desktop.interface", "font-name").status == 0)
        try await waitUntil { b.get("org.gnome.desktop.interface.gtk-theme") == "From-B" }

        try cluster.psql("ALTER ROLE \(role.name) LOGIN")
        try await waitUntil(timeout: 30) {
            a.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'From-B'"
                && b.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'From-B'"
                && b.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "40"
                && a.session.dconf("read", "/org/gnome/desktop/interface/font-name").output.isEmpty
        }
        #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "20").status == 0)
    }

    @Test(
        "a machine that used GNOME before joining adopts the fleet's values and adds only what the fleet lacks"
    )
    func joiningMachineAdoptsTheFleet() async throws {
        let hub = try Self.namespace()
        let a = try await DconfMachine("a", hub: hub)
        #expect(a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Fleet").status == 0)
        try await waitUntil { a.get("org.gnome.desktop.interface.gtk-theme") == "Fleet" }
        #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)
        let c = try await DconfMachine("c", hub: hub, starting: false)
        #expect(
            c.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Old-local").status == 0)
        #expect(c.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "64").status == 0)
        try c.start()
        #expect(c.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Fleet'")
        try await waitUntil { a.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "64" }
        #expect(a.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Fleet'")
    }

    @Test(
        "a dconf change made while the daemon was down is stamped when dconf wrote it: a later write elsewhere wins, an earlier one loses"
    )
    func offlineChangeKeepsItsTime() async throws {
        let hub = try Self.namespace()
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine("b", hub: hub)
        let theme = "/org/gnome/desktop/interface/gtk-theme"
        let cursor = "/org/gnome/desktop/interface/cursor-theme"
        #expect(a.session.dconf("write", theme, "'shared'").status == 0)
        #expect(a.session.dconf("write", cursor, "'shared'").status == 0)
        try await waitUntil {
            b.session.dconf("read", theme).output == "'shared'\n"
                && b.session.dconf("read", cursor).output == "'shared'\n"
        }
        #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)

        // B's write of the cursor theme comes before A's offline edits, its theme after them.
        #expect(b.session.dconf("write", cursor, "'b-earlier'").status == 0)
        try await waitUntil { b.get("org.gnome.desktop.interface.cursor-theme") == "b-earlier" }
        #expect(b.cli("sync", "--wait", "--timeout", "20").status == 0)
        a.crash()
        // Wall time must move on between the edits for their order to be seen in their stamps.
        try await Task.sleep(for: .milliseconds(20))
        #expect(a.session.dconf("write", theme, "'a-offline'").status == 0)
        #expect(a.session.dconf("write", cursor, "'a-offline'").status == 0)
        try await Task.sleep(for: .milliseconds(20))
        #expect(b.session.dconf("write", theme, "'b-later'").status == 0)
        try await waitUntil { b.get("org.gnome.desktop.interface.gtk-theme") == "b-later" }
        #expect(b.cli("sync", "--wait", "--timeout", "20").status == 0)

        try a.start()
        #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
        try await waitUntil(timeout: 30) {
            [a, b].allSatisfy { machine in
                machine.session.dconf("read", theme).output == "'b-later'\n"
                    && machine.session.dconf("read", cursor).output == "'a-offline'\n"
            }
        }
        #expect(a.get("org.gnome.desktop.interface.gtk-theme") == "b-later")
        #expect(b.get("org.gnome.desktop.interface.cursor-theme") == "a-offline")
    }

    @Test(
        "a custom keybinding's command written on one machine never reaches another's dconf through a shared hub"
    )
    func commandsStayOnTheirMachine() async throws {
        let hub = try Self.namespace()
        let a = try await DconfMachine("a", hub: hub)
        let b = try await DconfMachine("b", hub: hub)
        let binding = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"
        #expect(a.session.dconf("write", binding + "command", "'touch /tmp/owned'").status == 0)
        #expect(a.session.dconf("write", binding + "binding", "'<Super>x'").status == 0)
        #expect(
            a.session.dconf(
                "write", "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings", "['\(binding)']"
            ).status == 0)
        #expect(
            a.session.dconf("write", "/org/gnome/desktop/interface/gtk-theme", "'after-the-binding'").status
                == 0)
        try await waitUntil {
            b.session.dconf("read", "/org/gnome/desktop/interface/gtk-theme").output
                == "'after-the-binding'\n"
        }
        #expect(a.cli("sync", "--wait", "--timeout", "20").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "20").status == 0)
        #expect(b.session.dconf("read", binding + "command").output.isEmpty)
        #expect(b.session.dconf("dump", "/org/gnome/settings-daemon/").output.isEmpty)
        #expect(
            a.get("org.gnome.settings-daemon.plugins.media-keys.custom-keybindings.custom0.command") != nil)
    }

    @Test(
        "a mandatory GNOME key from a hub policy, written with the command line, is held in dconf at its value; removing the policy gives the user's back"
    )
    func mandatoryPolicyHoldsDconf() async throws {
        let cluster = try PostgresCluster.shared()
        _ = try HubAdministration.initialize(url: cluster.conninfo())
        let admin = try cluster.makeRole("gnomeadmin")
        try cluster.psql("GRANT settingsd_policy_admin TO \(admin.name)")
        let user = try cluster.makeRole("gnomeuser")
        let machine = try await DconfMachine(
            "managed", hub: cluster.conninfo(user: user.name, password: user.password))
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Mine").status == 0)
        try await waitUntil { machine.get("org.gnome.desktop.interface.gtk-theme") == "Mine" }
        #expect(machine.cli("sync", "--wait", "--timeout", "20").status == 0)

        let folder = TemporaryDirectory()
        try
            #"{"format": "settingsd-policy", "version": 1, "keys": {"org.gnome.desktop.interface.gtk-theme": {"value": "Managed", "level": "mandatory"}}}"#
            .write(toFile: folder.file("policy.json"), atomically: true, encoding: .utf8)
        let url = cluster.conninfo(user: admin.name, password: admin.password)
        let policy = "gnome-\(user.name)"
        let written = DaemonProcess.run(
            ["hub", "policy", "set", url, policy, folder.file("policy.json"), "--target", user.name])
        #expect(written.status == 0, "\(written.error)")
        #expect(written.output.contains("wrote policy '\(policy)' revision 1"), "\(written.output)")
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Managed'"
        }
        let explained = machine.cli("get", "org.gnome.desktop.interface.gtk-theme", "--explain")
        #expect(explained.output.contains("from: mandatory by the hub's policy '\(policy)' (revision 1)"))
        #expect(explained.output.contains("overrides: the user's value: \"Mine\""), "\(explained.output)")
        // The user's change in GNOME is undone, and not stored.
        #expect(
            machine.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Escape").status == 0
        )
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Managed'"
        }
        #expect(machine.cli("set", "org.gnome.desktop.interface.gtk-theme", "Escape").status == 1)
        let status = machine.cli("status").output
        #expect(
            status.contains("hub policy: '\(policy)' revision 1: 1 mandatory, 0 recommended key(s)"),
            "\(status)")
        let report = DaemonProcess.run(["hub", "report", url, policy])
        #expect(
            report.output.contains("\(policy) revision 1: 1 applied, 0 failed, 0 pending, 0 not seen"),
            "\(report.output)")

        #expect(DaemonProcess.run(["hub", "policy", "remove", url, policy]).status == 0)
        try await waitUntil {
            machine.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Mine'"
        }
    }
}
