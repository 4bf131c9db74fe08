import Synchronization

/// The default `SettingsConfiguration.onError`: each failure of an API that cannot throw (a
/// typed read that found another type and returned the default, a refused `@Setting` set) is
/// logged as a warning once per key and kind, so it is seen without flooding the log.
package final class ErrorReport: Sendable {
    /// The report every store of this process shares by default.
    package static let shared = ErrorReport(logger: SettingsLogger(minimumLevel: .warning))

    private let logger: SettingsLogger
    private let reported = Mutex<Set<String>>([])

    package init(logger: SettingsLogger) {
        self.logger = logger
    }

    /// Logs `error` unless one of its code was logged for its key already; returns whether it did.
    @discardableResult
    package func report(_ error: SettingsError) -> Bool {
        let identity = "\(error.code.rawValue) \(error.key ?? error.message)"
        guard reported.withLock({ $0.insert(identity).inserted }) else { return false }
        logger.log(
            .warning,
            "\(error.message) (reported once per key; set SettingsConfiguration.onError to handle these)")
        return true
    }
}
