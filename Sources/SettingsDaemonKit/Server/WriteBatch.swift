import SettingsDaemonClient
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// The writes received during one round of the event loop, committed together when the round
/// ends: N clients writing at once cost far fewer than N commits. Each write is answered only
/// after the commit holding it is durable.
///
/// Used only on the loop thread.
final class WriteBatch {
    /// One request's writes, applied inside a store transaction, and where its outcome goes.
    struct Work {
        /// Why: `local` work is committed in groups, anything else alone.
        let reason: ChangeReason
        /// The client, for the history.
        let actor: ChangeActor?
        let apply: (SettingsTransaction) throws -> [String: JSONValue]
        let completion: (Result<[String: JSONValue], SettingsError>) -> Void
    }

    private let settings: Settings
    private var pending: [Work] = []

    init(settings: Settings) {
        self.settings = settings
    }

    /// Queues `work` for the end of the round.
    func add(_ work: Work) {
        pending.append(work)
    }

    /// Commits everything queued, including writes that answered requests queue meanwhile.
    func commit() {
        while !pending.isEmpty {
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            var group: [Work] = []
            for work in batch {
                if work.reason == .local {
                    group.append(work)
                } else {
                    commitGroup(group)
                    group = []
                    commitGroup([work])
                }
            }
            commitGroup(group)
        }
    }

    /// Commits local writes in one transaction; if that fails, each is retried alone so one bad
    /// request cannot fail its neighbours.
    private func commitGroup(_ group: [Work]) {
        guard let first = group.first else { return }
        do {
            let results = try settings.transaction(reason: first.reason) {
                transaction in
                try group.map { work in
                    transaction.actor = work.actor
                    return try work.apply(transaction)
                }
            }
            let sequence = JSONValue.integer(settings.sequence)
            for (work, result) in zip(group, results) {
                work.completion(.success(result.merging(["sequence": sequence]) { $1 }))
            }
        } catch {
            guard group.count > 1 else {
                first.completion(
                    .failure(error as? SettingsError ?? SettingsError(.sqlite, "write failed: \(error)")))
                return
            }
            for work in group { commitGroup([work]) }
        }
    }
}
