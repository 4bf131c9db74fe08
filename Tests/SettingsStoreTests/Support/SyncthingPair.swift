import Foundation

/// Two real Syncthing instances (Debian's `syncthing`) on 127.0.0.1, each with a home of its
/// own, sharing one folder (`folders[0]` on the first, `folders[1]` on the second): what two
/// machines of a user look like to a folder link. No discovery, relays or GUI; the folder is
/// watched for changes (Syncthing's own inotify watcher) with a one-second delay.
final class SyncthingPair {
    let directory: TemporaryDirectory
    /// The shared folder as each instance holds it.
    let folders: [String]
    private var processes: [SpawnedProcess] = []

    /// Whether Syncthing is installed (`.ci/run` installs it).
    static let isAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/syncthing")

    init() throws {
        directory = TemporaryDirectory("syncthing")
        folders = [directory.file("a/Sync"), directory.file("b/Sync")]
        let homes = [directory.file("a/home"), directory.file("b/home")]
        let ports = [try LocalPorts.free(), try LocalPorts.free()]
        var ids: [String] = []
        for home in homes {
            let made = DaemonProcess.run(
                ["generate", "--home=\(home)", "--no-default-folder"], through: "/usr/bin/syncthing")
            guard made.status == 0,
                let line = (made.output + made.error).split(separator: "\n").first(where: {
                    $0.contains("Device ID:")
                })
            else { throw SettingsTestError("syncthing generate failed: \(made.error)") }
            ids.append(line.components(separatedBy: "Device ID:")[1].trimmingCharacters(in: .whitespaces))
        }
        for index in 0..<2 {
            try FileManager.default.createDirectory(atPath: folders[index], withIntermediateDirectories: true)
            let devices = (0..<2).map { other in
                """
                    <device id="\(ids[other])" name="machine\(other)" compression="metadata" introducer="false">
                        <address>tcp://127.0.0.1:\(ports[other])</address>
                    </device>
                """
            }.joined(separator: "\n")
            let config = """
                <configuration version="36">
                    <folder id="settingsd" label="settingsd" path="\(folders[index])" type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="true" fsWatcherDelayS="1">
                        <device id="\(ids[0])"></device>
                        <device id="\(ids[1])"></device>
                        <minDiskFree unit="%">0</minDiskFree>
                    </folder>
                \(devices)
                    <gui enabled="false"></gui>
                    <options>
                        <listenAddress>tcp://127.0.0.1:\(ports[index])</listenAddress>
                        <globalAnnounceEnabled>false</globalAnnounceEnabled>
                        <localAnnounceEnabled>false</localAnnounceEnabled>
                        <relaysEnabled>false</relaysEnabled>
                        <natEnabled>false</natEnabled>
                        <urAccepted>-1</urAccepted>
                        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                        <crashReportingEnabled>false</crashReportingEnabled>
                        <startBrowser>false</startBrowser>
                        <minHomeDiskFree unit="%">0</minHomeDiskFree>
                    </options>
                </configuration>

                """
            try config.write(toFile: homes[index] + "/config.xml", atomically: true, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment
            environment["STNOUPGRADE"] = "1"
            environment["HOME"] = directory.file(index == 0 ? "a" : "b")
            processes.append(
                try SpawnedProcess(
                    [
                        "/usr/bin/syncthing", "serve", "--home=\(homes[index])", "--no-browser",
                        "--no-restart",
                    ],
                    environment: environment, log: directory.file("syncthing\(index).log")))
        }
        let deadline = Date().addingTimeInterval(30)
        while !ports.allSatisfy(LocalPorts.accepts) {
            guard Date() < deadline else { throw SettingsTestError("Syncthing did not listen in 30 s") }
            guard processes.allSatisfy(\.isRunning) else {
                throw SettingsTestError("Syncthing exited: \(log)")
            }
            usleep(50_000)
        }
    }

    /// What both instances logged, for a failure's message.
    var log: String {
        (0..<2).map {
            (try? String(contentsOfFile: directory.file("syncthing\($0).log"), encoding: .utf8)) ?? ""
        }
        .joined(separator: "\n---\n")
    }

    /// The files under both copies of the folder whose names say a syncer made a conflict copy.
    var conflictCopies: [String] {
        folders.flatMap { folder in
            (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? [])
                .filter { $0.contains("sync-conflict") }
        }
    }
}
