/// What a key must hold for a write to go ahead: the compare of a compare-and-set.
///
/// ```swift
/// let current = settings.versionedValue(forKey: "jobs.next")
/// try settings.transaction { transaction in
///     try transaction.require(current.map { .version($0.version) } ?? .absent, forKey: "jobs.next")
///     try transaction.set(42, forKey: "jobs.next")
/// }
/// ```
///
/// A default (registered, schema, system) is no stored value: a key that only has one is
/// `absent`. A precondition compares what the store holds, never what the transaction wrote.
public enum SettingPrecondition: Sendable, Hashable, CustomStringConvertible {
    /// The key holds a value of exactly this version.
    case version(SettingVersion)
    /// The key holds no value: never written, or deleted.
    case absent

    /// Whether a key whose stored value has `version` (nil: it holds none) meets this.
    public func isMet(by version: SettingVersion?) -> Bool {
        switch self {
        case .version(let required): version == required
        case .absent: version == nil
        }
    }

    /// `version V` or `absent`, as messages say it.
    public var description: String {
        switch self {
        case .version(let version): "version \(version)"
        case .absent: "no value"
        }
    }
}

/// A stored value with the version that wrote it: what a compare-and-set compares.
public struct VersionedValue: Sendable, Hashable {
    /// The stored value.
    public let value: SettingValue
    /// The version that wrote it.
    public let version: SettingVersion

    /// Creates a versioned value.
    public init(value: SettingValue, version: SettingVersion) {
        self.value = value
        self.version = version
    }

    /// The precondition this value meets: `.version` of it.
    public var precondition: SettingPrecondition { .version(version) }
}

extension Optional where Wrapped == VersionedValue {
    /// The precondition a read meets: its version, or `.absent` when it found no value.
    public var precondition: SettingPrecondition { self?.precondition ?? .absent }
}

extension SettingsError {
    /// `versionMismatch` for the keys whose preconditions failed, each with the version it holds.
    package static func versionMismatch(
        _ failed: [(key: String, required: SettingPrecondition, current: SettingVersion?)]
    ) -> SettingsError {
        let sorted = failed.sorted { $0.key < $1.key }
        let named = sorted.prefix(5).map { failure in
            "'\(failure.key)' holds \(failure.current.map { "version \($0)" } ?? "no value"), not \(failure.required)"
        }
        let more = sorted.count > 5 ? " (and \(sorted.count - 5) more keys)" : ""
        var error = SettingsError(
            .versionMismatch, named.joined(separator: "; ") + more + ": nothing was written",
            key: sorted.first?.key)
        for failure in sorted { error.versionTexts[failure.key] = .some(failure.current?.description) }
        return error
    }

    /// For `versionMismatch`: each key whose precondition failed, with the version it holds
    /// (nil: it holds no value).
    public var currentVersions: [String: SettingVersion?] {
        versionTexts.mapValues { text in text.flatMap { SettingVersion($0) } }
    }
}
