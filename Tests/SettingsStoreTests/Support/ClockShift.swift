import Foundation

/// Moves a daemon's wall clock while it runs: a preload (`ClockShim/clock_shift.c`, compiled here
/// once per test process) shifts `CLOCK_REALTIME`, `gettimeofday` and `time` by the milliseconds
/// this object writes to a file the preload maps. The monotonic clock is left alone, as a wall
/// clock stepped by NTP, `date -s` or a resumed virtual machine leaves it.
final class ClockShift {
    private let file: String
    private let descriptor: Int32

    /// The preload, compiled on first use; nil without a C compiler.
    static let library: String? = {
        guard let compiler = DconfShimTests.compiler else { return nil }
        var source = URL(fileURLWithPath: #filePath)
        source.deleteLastPathComponent()
        let input = source.appendingPathComponent("ClockShim/clock_shift.c").path
        let output = NSTemporaryDirectory() + "settingsd-clock-shift-\(getpid()).so"
        let built = DaemonProcess.run(
            ["-shared", "-fPIC", "-O2", "-o", output, input, "-ldl"], through: compiler)
        return built.status == 0 ? output : nil
    }()

    /// Whether the preload could be built.
    static var isAvailable: Bool { library != nil }

    /// A shift of zero, in a file of `directory`.
    init(_ directory: TemporaryDirectory) throws {
        file = directory.file("clock-shift")
        descriptor = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SettingsTestError("cannot create \(file)") }
        set(milliseconds: 0)
    }

    deinit {
        close(descriptor)
    }

    /// What a daemon's environment needs to follow this shift.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = Self.library
        environment["SETTINGSD_CLOCK_SHIFT_FILE"] = file
        return environment
    }

    /// Sets the shift: the daemon's wall clock reads `milliseconds` later than the real one.
    func set(milliseconds: Int64) {
        var value = milliseconds
        _ = withUnsafeBytes(of: &value) { pwrite(descriptor, $0.baseAddress, 8, 0) }
    }
}
