import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsSync

/// GNOME settings following a user's two machines with no server: each machine a private dconf
/// session and a daemon bridging it, joined only by SSH, or only by a folder they share.
@Suite(
    "dconf bridge over SSH and through a synced folder: two machines, no server",
    .enabled(if: DconfSession.isAvailable, "needs dbus, dconf-service, dconf-cli and libglib2.0-bin"),
    .enabled(if: DconfSession.hasDesktopSchemas, "needs gsettings-desktop-schemas")
)
struct DconfTransportTests {
    /// A change on each machine reaches the other's dconf with its type, and a reset travels.
    private func follow(_ a: DconfMachine, _ b: DconfMachine) async throws {
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.interface", "gtk-theme", "Adwaita-dark").status == 0
        )
        #expect(
            a.session.gsettings("set", "org.gnome.desktop.peripherals.keyboard", "delay", "uint32 300").status
                == 0)
        try await waitUntil(timeout: 60) {
            b.gsettings(get: "org.gnome.desktop.interface", "gtk-theme") == "'Adwaita-dark'"
                && b.session.dconf("read", "/org/gnome/desktop/peripherals/keyboard/delay").output
                    == "uint32 300\n"
        }
        #expect(b.session.gsettings("set", "org.gnome.desktop.interface", "cursor-size", "48").status == 0)
        #expect(b.session.gsettings("reset", "org.gnome.desktop.interface", "gtk-theme").status == 0)
        try await waitUntil(timeout: 60) {
            a.gsettings(get: "org.gnome.desktop.interface", "cursor-size") == "48"
                && a.session.dconf("read", "/org/gnome/desktop/interface/gtk-theme").output.isEmpty
        }
        #expect(a.cli("sync", "--wait", "--timeout", "30").status == 0)
        #expect(b.cli("sync", "--wait", "--timeout", "30").status == 0)
    }

    @Test(
        "through a folder both machines sync: gsettings on one reaches the other, both ways, a reset included"
    )
    func folder() async throws {
        let shared = TemporaryDirectory()
        let folder = shared.file("Sync/settings")
        let a = try await DconfMachine("a", arguments: ["--folder", folder])
        let b = try await DconfMachine("b", arguments: ["--folder", folder])
        try await follow(a, b)
    }

    @Test(
        "over SSH only: gsettings on one reaches the other, both ways, a reset included",
        .enabled(if: SSHServer.isAvailable))
    func ssh() async throws {
        let server = try SSHServer()
        let a = try await DconfMachine("a")
        let socket = try #require(a.daemon?.socket)
        let b = try await DconfMachine(
            "b",
            arguments: [
                "--peer", server.address(socket: socket), "--remote-settingsd", SettingsdBinary.path,
            ],
            environment: [SSHChannel.sshCommandVariable: server.sshCommand])
        try await follow(a, b)
    }
}
