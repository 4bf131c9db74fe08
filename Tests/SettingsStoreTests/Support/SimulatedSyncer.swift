import Foundation

/// A file syncer between the copies of one synced folder on several "machines" (one folder per
/// machine), as hostile as real ones are allowed to be: files arrive late and out of order, half
/// written under their final name before they are whole (a non-atomic syncer, an rclone mount),
/// twice, beside conflict copies; removals travel too. Each replica's folder is copied from the
/// machine that writes it (its owner) to the others. Random, from a seed, so a failure replays.
final class SimulatedSyncer {
    let machines: [String]
    private var generator: SeededGenerator
    /// The machine that writes each replica folder (where it appeared first).
    private var owners: [String: Int] = [:]
    /// Files left half-written on a machine, to complete later.
    private var partial: [(machine: Int, path: String, source: String)] = []

    init(machines: [String], seed: UInt64) {
        self.machines = machines
        self.generator = SeededGenerator(seed: seed)
    }

    /// One round: each file that differs is copied (or removed) with probability `chance`,
    /// now and then half-written first or beside a conflict copy.
    func step(chance: Double = 0.5, chaos: Bool = true) {
        for (index, _) in partial.enumerated().reversed() where roll() < chance || !chaos {
            let file = partial.remove(at: index)
            if let data = FileManager.default.contents(atPath: file.source) {
                try? data.write(to: URL(fileURLWithPath: file.path), options: .atomic)
            }
        }
        for (machine, root) in machines.enumerated() {
            for replica in folders(in: root) where owners[replica] == nil { owners[replica] = machine }
        }
        for (replica, owner) in owners.sorted(by: { $0.key < $1.key }) {
            let source = machines[owner] + "/" + replica
            let sourceFiles = files(in: source)
            for (machine, root) in machines.enumerated() where machine != owner {
                let target = root + "/" + replica
                try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                let targetFiles = files(in: target)
                for name in sourceFiles.sorted() where roll() < chance || !chaos {
                    let from = source + "/" + name
                    let to = target + "/" + name
                    guard let data = FileManager.default.contents(atPath: from),
                        FileManager.default.contents(atPath: to) != data
                    else { continue }
                    if chaos, roll() < 0.15, data.count > 8 {
                        // Half of it under its final name; the rest comes later.
                        try? data.prefix(data.count / 2).write(to: URL(fileURLWithPath: to))
                        partial.append((machine, to, from))
                        continue
                    }
                    try? data.write(to: URL(fileURLWithPath: to), options: .atomic)
                    if chaos, roll() < 0.05 {
                        let copy = to.replacingOccurrences(
                            of: ".json", with: ".sync-conflict-20261207-\(Int(roll() * 1e6)).json")
                        try? data.write(to: URL(fileURLWithPath: copy), options: .atomic)
                    }
                }
                for name in targetFiles where !sourceFiles.contains(name) && !name.contains("sync-conflict") {
                    if roll() < chance || !chaos { unlink(target + "/" + name) }
                }
            }
        }
    }

    /// Replaces `machine`'s copy of replica folder `replica` with `old` (a copy made earlier): a
    /// folder restored from an old backup.
    func restore(_ replica: String, on machine: Int, from old: [String: Data]) {
        let target = machines[machine] + "/" + replica
        for name in files(in: target) { unlink(target + "/" + name) }
        for (name, data) in old {
            try? data.write(to: URL(fileURLWithPath: target + "/" + name), options: .atomic)
        }
    }

    /// The files of a replica folder on a machine now.
    func contents(of replica: String, on machine: Int) -> [String: Data] {
        let folder = machines[machine] + "/" + replica
        var result: [String: Data] = [:]
        for name in files(in: folder) {
            result[name] = FileManager.default.contents(atPath: folder + "/" + name)
        }
        return result
    }

    func folders(in root: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { !$0.hasPrefix(".") }
            .sorted()
    }

    private func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }
    }

    private func roll() -> Double {
        Double.random(in: 0..<1, using: &generator)
    }
}
