package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal in the browser's mode, and back: raw input (no echo, no line editing, Ctrl-C as
/// a key), the alternate screen, no cursor, no automatic wrap, mouse reports. The mode is left on
/// `leave()`, on SIGTERM and SIGHUP (through the loop), and on a crash: a fatal signal restores
/// the terminal in its handler before the process dies, so the shell is never left garbled.
package final class TerminalSession {
    /// The descriptor keys are read from.
    package let input: Int32
    /// The descriptor frames are written to.
    package let output: Int32
    private let saved: termios
    private let reportsMouse: Bool
    private var isEntered = false

    /// Takes the terminal on `input` and `output`.
    ///
    /// - Throws: `invalidValue` when either is not a terminal.
    package init(input: Int32 = 0, output: Int32 = 1, reportsMouse: Bool = true) throws(SettingsError) {
        guard isatty(input) == 1, isatty(output) == 1 else {
            throw SettingsError(
                .invalidValue,
                "the browser needs a terminal on standard input and output; use 'settingsd list' in scripts")
        }
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else {
            throw SettingsError(
                .invalidValue, "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        self.input = input
        self.output = output
        self.saved = attributes
        self.reportsMouse = reportsMouse
    }

    deinit {
        leave()
    }

    /// The terminal's size in cells (80 × 24 when it does not say).
    package var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Enters the browser's mode.
    package func enter() {
        guard !isEntered else { return }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        CrashRestore.arm(descriptor: output, attributes: saved)
        tcsetattr(input, TCSAFLUSH, &raw)
        write(Self.enterSequence + (reportsMouse ? Self.mouseOn : ""))
        isEntered = true
    }

    /// Leaves the browser's mode: the shell's screen, cursor and settings come back.
    package func leave() {
        guard isEntered else { return }
        write(Self.leaveSequence)
        var attributes = saved
        tcsetattr(input, TCSAFLUSH, &attributes)
        CrashRestore.disarm()
        isEntered = false
    }

    /// Hands the terminal back and stops the process (Ctrl-Z); takes it again when continued.
    package func suspend() {
        leave()
        kill(getpid(), SIGTSTP)
        enter()
    }

    /// Writes `bytes` whole.
    package func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(output, buffer.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    private func write(_ text: String) {
        write(Array(text.utf8))
    }

    /// The alternate screen, the cursor hidden, no automatic wrap.
    static let enterSequence = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[2J"
    /// SGR mouse reports of presses and the wheel.
    static let mouseOn = "\u{1B}[?1000h\u{1B}[?1006h"
    /// Everything `enterSequence` and `mouseOn` changed, undone, in one string a signal handler
    /// can write as is.
    static let leaveSequence: StaticString =
        "\u{1B}[?1000l\u{1B}[?1006l\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"
}

extension TerminalSession {
    fileprivate func write(_ text: StaticString) {
        write(Array(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)))
    }
}
