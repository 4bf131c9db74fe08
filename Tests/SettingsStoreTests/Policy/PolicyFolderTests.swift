import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

extension Reliability {
    /// Administrators' folders may hold anything: a FIFO, a socket or a folder among the files is
    /// skipped with a warning, and never blocks the daemon's start or a reload.
    @Suite("Policy folders: non-regular files are skipped, never read", .timeLimit(.minutes(1)))
    struct PolicyFolderTests {
        let directory = TemporaryDirectory()

        @Test("FIFOs in the schemas folder and in locks.d neither hang the start nor jam later reloads")
        func fifosAreSkipped() async throws {
            let system = try SystemFolder(directory, locks: ["a": "audio.muted\n"])
            let schemas = directory.file("schemas")
            try FileManager.default.createDirectory(atPath: schemas, withIntermediateDirectories: true)
            #expect(mkfifo("\(schemas)/waiting.json", 0o644) == 0)
            #expect(mkfifo("\(system.path)/locks.d/zz-fifo", 0o644) == 0)
            #expect(mkdir("\(system.path)/locks.d/a-folder", 0o755) == 0)
            let daemon = try DaemonProcess(
                directory, arguments: ["--schemas", schemas, "--system-dir", system.path])
            #expect(daemon.cli("set", "audio.muted", "true").status == 1)  // the real lock is in force
            // A reload after a change still happens: the FIFO is not read.
            try "ui.theme\n".write(toFile: "\(system.path)/locks.d/b", atomically: true, encoding: .utf8)
            try await waitUntil(timeout: 60) { daemon.cli("set", "ui.theme", "dark").status == 1 }
            #expect(daemon.cli("set", "free.key", "1").status == 0)
        }

        @Test(
            "a link in locks.d or defaults.d to a kernel file (/proc/self/environ) is skipped with a warning")
        func kernelFilesAreSkipped() throws {
            let system = try SystemFolder(directory, locks: ["a": "audio.muted\n"])
            #expect(symlink("/proc/self/environ", "\(system.path)/locks.d/environ") == 0)
            try FileManager.default.createDirectory(
                atPath: "\(system.path)/defaults.d", withIntermediateDirectories: true)
            #expect(symlink("/proc/self/status", "\(system.path)/defaults.d/status.json") == 0)
            let policy = try SettingsPolicy.load(
                schemaDirectories: [], systemDirectory: system.path, extensions: .gnome)
            #expect(policy.locks.map(\.key) == ["audio.muted"])
            #expect(policy.warnings.contains { $0.contains("locks.d/environ") }, "\(policy.warnings)")
            #expect(policy.warnings.contains { $0.contains("defaults.d/status.json") }, "\(policy.warnings)")
        }
    }
}
