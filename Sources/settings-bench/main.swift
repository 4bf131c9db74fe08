// settings-bench: measures settingsd beside its peers and prints a table with ratios.
import Foundation
import PostgresFixture
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    USAGE: settings-bench <suite> [--quick] [--json]

    --quick  fewer rounds and smaller stores: a smoke run, not figures to report
    --only PART  one part of a suite (or several, comma-separated): store (reads, writes, schema, history, batch, open,
                 gsettings),
                 daemon (process, round-trips, idle, writers, watch), sync (initial, ssh, folder, latency, writes,
                 catch-up, sizes),
                 hub (push, fanout, fanout100, writers)
    --keys N[,N…]      sync (part sizes): the store sizes of the initial sync by size (default 1000 to 200000)
    --machines N[,N…]  fleet: the fleet sizes (default 10,100,1000,10000)
    --poll-max S       fleet: the floor of the links' longest poll interval (default 5 s)
    --poll-rate N      fleet: the hub's poll rate, polls a second a namespace (1250)
    --pool-size N      fleet: PgBouncer's server connections per user and database (default 10)
    --json   one JSON object per measurement (suite, measurement, value, unit, peer,
             peer_value, ratio, target, met) on standard output; progress on standard error

    SUITES:
      store     cached reads, durable writes, batches and opening a large store,
                beside UserDefaults and raw libsqlite3; loading the installed GSettings schemas
                beside GSettings' compiled file, importing a 10,000-key dconf dump beside dconf load
      observe   @Setting property reads beside store reads; set-to-owner-notification latency
      daemon    the CLI as a whole process beside sqlite3, dconf and redis-cli, round trips and
                pipelined gets beside Redis, 32 durable writers beside raw SQLite and Redis
                (appendonly, everysec), set-to-watch latency, resuming (a watch replaying 100,000
                missed changes, sets with a version precondition beside plain sets, settingsd set
                beside get as whole processes); uses the settingsd next to this binary
                (build with: swift build -c release --static-swift-stdlib)
      sync      initial sync between two daemons, beside the same over SSH (a private sshd on
                loopback) and through a shared folder (set-to-watch latency, idle wake-ups, the
                folder's size), set-to-remote-watch latency, local sets on a replica while it
                takes an initial sync, catch-up of 100 changes on a large replica (uses the
                settingsd next to this binary)
      hub       daemons through a PostgreSQL hub: push beside raw libpq upserts, initial sync,
                catch-up, fan-out latency to 10 daemons, 10 concurrent writers (starts a private
                cluster, or uses $SETTINGSD_HUB as an administrator)
      fleet     10 to 10,000 machines on one namespace through PgBouncer in transaction pooling
                (simulated links: the link's statements and intervals), beside direct connections
                where they fit: server connections, idle CPU, statements, propagation, a burst of
                writers; ten real daemons through the pooler (starts PostgreSQL and PgBouncer)
      browse    settingsd browse in a pseudo-terminal on 100,000 keys: start to the first screen
                beside settingsd list, a change by another client to the screen beside that
                client's watch event, the browser's memory beside the daemon's
      flatpak   Flatpak apps' keyfiles (run --flatpak): a change in a running GLib app on one machine
                until the app on another hears it through a synced folder, beside the folder
                alone; a daemon's start with 100 apps' keyfiles beside one without --flatpak
      dconf     the live dconf bridge: gsettings set on one machine to dconf's change signal on
                another through the hub (beside one machine's own), the idle bridge's wake-ups
                and CPU over 60 s, the first comparison of a 2,000-key user database at start
    """

// Stopped by hand (Ctrl-C, `kill`), the suites still stop the PostgreSQL and PgBouncer they started.
FixtureCleanup.stopOnSignals()

switch arguments.first {
case "store":
    StoreBenchmark(quick: arguments.contains("--quick")).run()
case "observe":
    ObserveBenchmark(quick: arguments.contains("--quick")).run()
case "daemon":
    DaemonBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "sync":
    SyncBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "hub":
    HubBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "fleet":
    FleetBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "flatpak":
    FlatpakBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "browse":
    BrowseBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "dconf":
    DconfBenchmark(quick: arguments.contains("--quick"), binary: siblingSettingsd()).run()
case "open-probe" where arguments.count == 2:
    // Internal: the store suite opens its large store in a fresh process through this.
    StoreBenchmark.openProbe(path: arguments[1])
case "-h", "--help", "help":
    print(usage)
default:
    FileHandle.standardError.write(Data("Error: unknown or missing suite\n\(usage)\n".utf8))
    exit(64)
}

/// The `settingsd` built next to this benchmark.
func siblingSettingsd() -> String {
    let folder = CommandLine.arguments[0].split(separator: "/").dropLast().joined(separator: "/")
    // Absolute: an SSH peer runs it as the remote command, from the remote user's home.
    let base = CommandLine.arguments[0].hasPrefix("/") ? "" : FileManager.default.currentDirectoryPath + "/"
    return (CommandLine.arguments[0].hasPrefix("/") ? "/" : base) + folder + "/settingsd"
}
