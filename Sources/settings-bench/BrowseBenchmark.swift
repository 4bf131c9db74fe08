import CLinux
import Foundation
import SettingsDaemonClient
import SettingsStore
import SettingsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `settings-bench browse`: `settingsd browse` in a pseudo-terminal on a daemon of 100,000 keys,
/// read as a terminal reads it: the time from starting it to its first whole screen (beside
/// `settingsd list` printing every key), a change by another client to the screen (beside that
/// client's own watch event), and the browser's memory (beside the daemon's).
struct BrowseBenchmark {
    let quick: Bool
    let binary: String

    func run() {
        runSuite { scratch in
            let daemon = try BenchDaemon(binary: binary, scratch: scratch)
            let keys = quick ? 10_000 : 100_000
            let client = try BlockingClient(socketPath: daemon.socket, timeout: 60)
            for start in stride(from: 0, to: keys, by: 10_000) {
                let writes = (start..<min(start + 10_000, keys)).map {
                    SettingWrite(key: Self.key($0), value: .integer(Int64($0)))
                }
                try client.request(.setMany(changes: writes))
            }
            note("\(keys) keys in the daemon (\(Self.key(0)) … \(Self.key(keys - 1)))")
            var report = Report(title: "browse")
            try firstScreen(into: &report, daemon: daemon, keys: keys)
            try changeOnScreen(into: &report, daemon: daemon, keys: keys)
            try searchAsTyped(into: &report, daemon: daemon, keys: keys)
            report.print()
        }
    }

    /// `app042.section3.key17`: 1,000 keys in each of 100 top-level folders.
    static func key(_ index: Int) -> String {
        func padded(_ number: Int, _ width: Int) -> String {
            String(repeating: "0", count: max(width - String(number).count, 0)) + String(number)
        }
        return "app\(padded(index / 1_000, 3)).section\(index / 100 % 10).key\(padded(index % 100, 2))"
    }

    /// Start to the first whole screen (its last row drawn), the median of a few starts.
    private func firstScreen(into report: inout Report, daemon: BenchDaemon, keys: Int) throws {
        let rounds = quick ? 3 : 7
        var starts: [Double] = []
        var searchReady: [Double] = []
        var memory: [Double] = []
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            let browser = try PseudoTerminalChild([binary, "browse", "--socket", daemon.socket])
            try browser.read(until: "Tab history")
            starts.append((ContinuousClock.now - start).seconds)
            // Every value taken in the background (the title stops counting): the search has them all.
            try browser.read(until: " keys · live")
            searchReady.append((ContinuousClock.now - start).seconds)
            memory.append(browser.residentMiB)
            browser.quit()
        }
        let listing = median(
            ChildProcess.wallTimes([binary, "list", "--socket", daemon.socket], count: rounds))
        report.time(
            "start to first screen, \(keys) keys", ours: median(starts), peer: listing,
            peerName: "settingsd list (every key)", target: .atMost(0.5, "< 0.5 s"))
        report.seconds(
            "start to every value taken (the search's), \(keys) keys", median(searchReady), target: .reported)
        report.quantity(
            "browser memory with every value, \(keys) keys", median(memory), unit: "MiB", format: "%.1f MiB",
            peer: daemon.residentMiB, peerName: "the daemon's", target: .reported)
    }

    /// A set by another client until the browser shows the new value on the selected key's row.
    private func changeOnScreen(into report: inout Report, daemon: BenchDaemon, keys: Int) throws {
        let key = Self.key(keys / 2)
        let browser = try PseudoTerminalChild([binary, "browse", "--socket", daemon.socket])
        try browser.read(until: " keys · live")
        browser.write(":\(key)\r")
        try browser.read(until: "value     \(keys / 2)")
        let setter = try BlockingClient(socketPath: daemon.socket, timeout: 10)
        let watcher = try BlockingClient(socketPath: daemon.socket, timeout: 10)
        try watcher.request(.watch(filter: .keys([key])))
        let count = quick ? 20 : 100
        var screen: [Double] = []
        var events: [Double] = []
        for round in 0..<count {
            let value = 7_000_000 + round
            let start = ContinuousClock.now
            try setter.request(.set(key: key, value: .integer(Int64(value))))
            _ = try watcher.nextEvent()
            events.append((ContinuousClock.now - start).seconds)
            try browser.read(until: "value     \(value)")
            screen.append((ContinuousClock.now - start).seconds)
        }
        browser.quit()
        report.latency(
            "set -> on the browser's screen", sorted: screen.sorted(), peer: events.sorted(),
            peerName: "the setter's neighbour's watch event", target: .percentiles(p50: 0.1, p99: 0.1))
    }
}

extension BrowseBenchmark {
    /// Each key typed into the search until the title counts its matches: names, summaries and
    /// values of every key; the first keystroke of a query reads them all, the next ones narrow.
    func searchAsTyped(into report: inout Report, daemon: BenchDaemon, keys: Int) throws {
        let browser = try PseudoTerminalChild([binary, "browse", "--socket", daemon.socket])
        try browser.read(until: " keys · live")
        var first: [Double] = []
        var next: [Double] = []
        for query in ["key55", "section3", "app04", "770", "ey9"] {
            browser.write("/")
            var typed = ""
            for character in query {
                typed.append(character)
                let start = ContinuousClock.now
                browser.write(String(character))
                try browser.read(until: "match '\(typed)'")
                let elapsed = (ContinuousClock.now - start).seconds
                if typed.count == 1 { first.append(elapsed) } else { next.append(elapsed) }
            }
            browser.write("\u{1B}")
            try browser.read(until: " keys · live")
        }
        browser.quit()
        report.latency(
            "search, a query's first key typed, \(keys) keys", sorted: first.sorted(), target: .reported)
        report.latency(
            "search, each key typed after it, \(keys) keys", sorted: next.sorted(), target: .reported)
    }
}

/// A program in a pseudo-terminal of 120 × 40 cells (its controlling terminal, in a session of its
/// own), its output read as a terminal would read it.
final class PseudoTerminalChild {
    private let master: Int32
    private let pid: pid_t
    private var output: [UInt8] = []

    init(_ arguments: [String], columns: UInt16 = 120, rows: UInt16 = 40) throws {
        master = posix_openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
            throw CocoaError(.fileNoSuchFile)
        }
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        let slavePath = String(cString: name)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, slavePath, O_RDWR, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A session of its own, whose terminal the pseudo-terminal becomes when it opens it.
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        var cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in cEnvironment { free(variable) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, arguments[0], &actions, &attributes, &cArguments, &cEnvironment) == 0 else {
            throw CocoaError(.executableLoad)
        }
        self.pid = pid
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(master)
    }

    /// Reads until `text` has been written since the last call that found its text.
    func read(until text: String, timeout: Duration = .seconds(30)) throws {
        let needle = Array(text.utf8)
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if let end = output.firstRange(of: needle)?.upperBound {
                output.removeFirst(end)
                return
            }
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard ContinuousClock.now < deadline, poll(&descriptor, 1, 1_000) >= 0 else {
                throw CocoaError(
                    .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "never showed '\(text)'"])
            }
            let count = Glibc.read(master, &buffer, buffer.count)
            if count > 0 { output += buffer.prefix(count) }
        }
    }

    /// Types `text`.
    func write(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
    }

    /// The program's resident memory now, in MiB.
    var residentMiB: Double { residentMemoryMiB(of: pid) }

    /// Types q and waits for it to end.
    func quit() {
        write("q")
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
