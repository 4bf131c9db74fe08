import Dispatch
import Synchronization

/// Commits the writes of many connections together: whatever arrives while a commit runs goes
/// into the next one, so a burst of N writers costs far fewer than N commits. Each write is
/// acknowledged only after the commit that holds it is durable.
final class GroupCommitter: Sendable {
    /// One request's writes, applied inside a store transaction, and where its outcome goes.
    struct Work: Sendable {
        let reason: ChangeReason
        let apply: @Sendable (SettingsTransaction) throws -> [String: JSONValue]
        let completion: @Sendable (Result<[String: JSONValue], SettingsError>) -> Void
    }

    private struct Pending {
        var work: [Work] = []
        var isDraining = false
    }

    private let settings: Settings
    private let queue = DispatchQueue(label: "settingsd.commit")
    private let pending = Mutex(Pending())

    init(settings: Settings) {
        self.settings = settings
    }

    /// Queues `work` for the next commit.
    func submit(_ work: Work) {
        let startDrain = pending.withLock { pending in
            pending.work.append(work)
            defer { pending.isDraining = true }
            return !pending.isDraining
        }
        if startDrain { queue.async { self.drain() } }
    }

    /// Blocks until everything submitted so far has been committed and answered.
    func waitUntilIdle() {
        while pending.withLock({ $0.isDraining }) { queue.sync {} }
    }

    private func drain() {
        while let batch = pending.withLock({ pending -> [Work]? in
            guard !pending.work.isEmpty else {
                pending.isDraining = false
                return nil
            }
            defer { pending.work.removeAll(keepingCapacity: true) }
            return pending.work
        }) {
            commit(batch)
        }
    }

    /// Commits local writes together and anything else (imports) on its own; if a group fails,
    /// its members are retried one by one so one bad request cannot fail its neighbours.
    private func commit(_ batch: [Work]) {
        var group: [Work] = []
        for work in batch {
            if work.reason == .local {
                group.append(work)
                continue
            }
            commitGroup(group)
            group = []
            commitGroup([work])
        }
        commitGroup(group)
    }

    private func commitGroup(_ group: [Work]) {
        guard !group.isEmpty else { return }
        do {
            let results = try settings.transaction(reason: group[0].reason) { transaction in
                try group.map { try $0.apply(transaction) }
            }
            let sequence = JSONValue.integer(settings.sequence)
            for (work, result) in zip(group, results) {
                work.completion(.success(result.merging(["sequence": sequence]) { $1 }))
            }
        } catch {
            guard group.count > 1 else {
                group[0].completion(.failure(Self.settingsError(error)))
                return
            }
            for work in group { commitGroup([work]) }
        }
    }

    private static func settingsError(_ error: any Error) -> SettingsError {
        error as? SettingsError ?? SettingsError(.sqlite, "write failed: \(error)")
    }
}
