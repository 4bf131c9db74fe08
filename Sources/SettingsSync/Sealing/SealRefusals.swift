package import SettingsStore

/// Sealed rows a read refused: how many, and the first few with their reasons, for the log and
/// `status` (`sealedRowsRefused`).
package struct SealRefusals: Sendable, Equatable {
    /// Rows refused.
    package private(set) var count = 0
    /// The first refusals, as "key id: reason".
    package private(set) var first: [String] = []
    /// Each refused row as key id and version, so a row met again (a pull, then a comparison)
    /// is counted once.
    package private(set) var rows: Set<String> = []

    /// The most refusals kept in words.
    static let kept = 3

    package init() {}

    /// Notes a refused row of `key` (its key id, or what the target calls it).
    package mutating func note(_ refusal: SealRefusal, key: String, version: SettingVersion? = nil) {
        count += 1
        if rows.count < 100_000 { rows.insert("\(key.prefix(40))@\(version.map { "\($0)" } ?? "")") }
        if first.count < Self.kept { first.append("\(key.prefix(40)): \(refusal)") }
    }

    /// Adds `other`'s refusals.
    package mutating func take(_ other: SealRefusals) {
        count += other.count
        rows.formUnion(other.rows.prefix(max(0, 100_000 - rows.count)))
        first += other.first.prefix(max(0, Self.kept - first.count))
    }

    /// The refusals in one line (empty when none).
    package var summary: String {
        count == 0
            ? ""
            : first.joined(separator: "; ") + (count > first.count ? "; and \(count - first.count) more" : "")
    }
}
