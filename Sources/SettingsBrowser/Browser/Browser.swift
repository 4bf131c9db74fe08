package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd browse`: the keys of a replica in a terminal, live. One thread runs one loop that
/// polls the terminal, the signal pipe and the watch connection, handles what arrived and draws
/// the frame that results (only its changed rows reach the terminal). Every request is one the
/// command line sends too, so the daemon validates an edit exactly as it validates `set`.
package final class Browser {
    var state = BrowserState()
    var catalog = KeyCatalog()
    var source: SettingsSource
    /// Opens the source again after the daemon went away (nil: a file, which does not go away).
    let reconnect: (() throws(SettingsError) -> SettingsSource)?
    let terminal: TerminalSession
    var writer: FrameWriter
    var decoder = KeyDecoder()
    var layout: Layout
    var isRunning = true
    let clock = ContinuousClock()
    /// When the sync view reads the state again.
    var nextStatus: ContinuousClock.Instant?
    /// When a lost daemon is tried again.
    var nextReconnect: ContinuousClock.Instant?

    /// How long a key changed by someone else stays highlighted.
    static let highlightTime = Duration.seconds(2)
    /// More keys than this in one batch of changes reload everything rather than describe each.
    static let describeLimit = 500
    /// The values one `getMany` takes in the background: about 20 ms of the daemon's and this
    /// loop's time, so a key pressed meanwhile waits no longer than that.
    static let valuesPerRequest = 5_000

    /// A browser of `source` on `terminal`; `reconnect` opens the source again after it is lost.
    package init(
        source: SettingsSource, terminal: TerminalSession, usesColor: Bool,
        reconnect: (() throws(SettingsError) -> SettingsSource)?
    ) {
        self.source = source
        self.terminal = terminal
        self.reconnect = reconnect
        writer = FrameWriter(usesColor: usesColor)
        let size = terminal.size
        layout = Layout(columns: size.columns, rows: size.rows)
    }

    /// Reads every key, takes the terminal, and runs until the person quits or a signal ends it.
    ///
    /// - Throws: What reading the keys first throws (the terminal is not taken then).
    package func run() throws(SettingsError) {
        catalog = try source.catalog()
        let signals = try SignalPipe()
        terminal.enter()
        defer { terminal.leave() }
        rebuildRows()
        if let first = state.rows.first { select(first.path) }
        while isRunning {
            draw()
            wait(signals: signals)
        }
    }

    /// Writes what changed on screen since the last frame.
    func draw() {
        describeVisibleKeys()
        let view = BrowserView(
            state: state, catalog: catalog, location: source.location, isReadOnly: source.isReadOnly,
            isLive: source.changeDescriptor != nil || state.connectionProblem != nil)
        terminal.write(writer.bytes(for: view.frame(layout, now: clock.now)))
    }

    /// Waits for a key, a signal, a change or the next timer, and handles what came.
    private func wait(signals: SignalPipe) {
        var descriptors = [
            pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        if let changes = source.changeDescriptor {
            descriptors.append(pollfd(fd: changes, events: Int16(POLLIN), revents: 0))
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds())
        if ready < 0 { return }
        if descriptors[1].revents != 0 { handle(signals.drain()) }
        if descriptors[0].revents != 0 { readKeys() }
        if descriptors.count > 2, descriptors[2].revents != 0 { receiveChanges() }
        runTimers()
        if catalog.isTakingValues, state.prompt == nil || ready == 0 { takeValues() }
    }

    /// Milliseconds until the next timer (a highlight's end, the sync view's refresh, a
    /// reconnection), or -1 for none.
    private func timeoutMilliseconds() -> Int32 {
        // Values still to take: look for input and go on taking them.
        if catalog.isTakingValues { return 0 }
        let now = clock.now
        var deadlines = state.highlighted.values.filter { $0 > now }
        if let nextStatus { deadlines.append(nextStatus) }
        if let nextReconnect { deadlines.append(nextReconnect) }
        guard let next = deadlines.min() else { return -1 }
        let (seconds, attoseconds) = (next - now).components
        return Int32(clamping: max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
    }

    /// The keys the terminal sent; end of input ends the browser (the terminal went away).
    private func readKeys() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(terminal.input, &buffer, buffer.count)
        if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
            isRunning = false
            return
        }
        guard count > 0 else { return }
        for key in decoder.decode(Array(buffer.prefix(count))) where isRunning {
            handle(key)
        }
    }

    /// Signals: a resize redraws at the new size, a continue takes the terminal again, the rest end.
    private func handle(_ signals: [Int32]) {
        for signal in signals {
            switch signal {
            case SIGWINCH:
                let size = terminal.size
                layout = Layout(columns: size.columns, rows: size.rows)
                writer.invalidate()
                scrollToSelection()
            case SIGCONT:
                terminal.leave()
                terminal.enter()
                writer.invalidate()
            default:
                isRunning = false
            }
        }
    }

    /// Ends highlights, refreshes the sync view, tries a lost daemon again.
    private func runTimers() {
        let now = clock.now
        state.highlighted = state.highlighted.filter { $0.value > now }
        if let due = nextStatus, due <= now { refreshStatus() }
        if let due = nextReconnect, due <= now { tryReconnecting() }
    }
}
