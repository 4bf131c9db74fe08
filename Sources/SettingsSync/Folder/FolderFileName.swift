import SettingsStore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a name in a synced folder is, read from the name alone: settingsd's own files follow
/// one strict pattern, so a syncer's conflict copy or temporary file is never mistaken for one.
///
/// In a replica's folder (`DIR/<replica id>/`):
/// - `b-<first>-<last>-<tag>.jsonl`: a batch of the replica's entries with local sequence
///   numbers `first…last`, written once under its running incarnation (`tag`: the first eight
///   hexadecimal digits of the incarnation's UUID, so two copies of one store never write a
///   file of the same name);
/// - `s-<through>-<tag>.jsonl`: a snapshot of every entry the replica publishes through
///   `through`, which replaces its older batches;
/// - `state.json`: what the replica last published, its digest and how far it read the others.
enum FolderFileName: Equatable {
    case batch(first: Int64, last: Int64, tag: String)
    case snapshot(through: Int64, tag: String)
    case state
    /// A hidden file: a syncer's temporary (`.syncthing.*.tmp`, `.~…`) or one of ours being
    /// written. Skipped silently: it is renamed into place when complete.
    case temporary
    /// A copy a syncer made of a file two machines changed (`*.sync-conflict-*`,
    /// `(conflicted copy)`, `*.part`, `*~`): settingsd never changes a file in place, so it
    /// holds nothing new. Skipped with one warning.
    case syncerCopy
    /// Anything else: not settingsd's. Skipped with one warning.
    case foreign

    /// The state file's name.
    static let stateName = "state.json"
    /// The seal record's name, at the top of a sealed folder (`SealRecord`).
    static let sealName = "seal.json"

    /// The tag of an incarnation in file names.
    static func tag(of incarnation: UUID) -> String {
        String(incarnation.uuidString.prefix(8)).lowercased()
    }

    /// A batch file's name.
    static func batchName(first: Int64, last: Int64, tag: String) -> String {
        "b-\(first)-\(last)-\(tag).jsonl"
    }

    /// A snapshot file's name.
    static func snapshotName(through: Int64, tag: String) -> String {
        "s-\(through)-\(tag).jsonl"
    }

    /// Reads a name found in a replica's folder.
    init(_ name: String) {
        if name.hasPrefix(".") {
            self = .temporary
        } else if name == Self.stateName {
            self = .state
        } else if let parsed = Self.parse(name) {
            self = parsed
        } else if Self.isSyncerCopy(name) {
            self = .syncerCopy
        } else {
            self = .foreign
        }
    }

    private static func parse(_ name: String) -> FolderFileName? {
        guard name.hasSuffix(".jsonl"), name.utf8.count <= 80 else { return nil }
        let fields = name.dropLast(".jsonl".count).split(separator: "-", omittingEmptySubsequences: false)
        func number(_ text: Substring) -> Int64? {
            guard !text.isEmpty, text.count <= 19, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
                text == "0" || !text.hasPrefix("0")
            else { return nil }
            return Int64(text)
        }
        func tag(_ text: Substring) -> String? {
            text.count == 8
                && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
                ? String(text) : nil
        }
        switch (fields.first, fields.count) {
        case ("b", 4):
            guard let first = number(fields[1]), let last = number(fields[2]), first >= 1, last >= first,
                let tag = tag(fields[3])
            else { return nil }
            return .batch(first: first, last: last, tag: tag)
        case ("s", 3):
            guard let through = number(fields[1]), through >= 1, let tag = tag(fields[2]) else { return nil }
            return .snapshot(through: through, tag: tag)
        default:
            return nil
        }
    }

    /// The names Syncthing, Nextcloud, Dropbox, OneDrive and rclone give the copies they keep.
    private static func isSyncerCopy(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.firstRange(of: ".sync-conflict-") != nil
            || lower.firstRange(of: "conflicted copy") != nil || lower.firstRange(of: "(conflict") != nil
            || lower.firstRange(of: "conflict-") != nil || lower.hasSuffix(".part")
            || lower.hasSuffix(".partial")
            || lower.hasSuffix("~") || lower.hasSuffix(".tmp") || lower.hasSuffix(".bak")
    }
}
