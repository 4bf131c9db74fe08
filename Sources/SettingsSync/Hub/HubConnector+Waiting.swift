import SettingsStore
import SettingsWire

/// How the link waits between rounds: polling the counter through a pooler (paced by the hub's
/// poll plan), or taking the notifications a listening session receives.
extension HubConnector {
    /// Polls the namespace's counter until it moves from `counter`, the store commits something
    /// to push, `verify()` is called, a comparison is due, or the link stops. A poll is one
    /// fast-path call (`HubPollCall`). The store's commit of what the link itself pulled wakes
    /// it too, and is slept through: on a fleet, that round would cost every machine two
    /// statements more per change. A routine comparison that falls due reads the poll plan
    /// here, and is spared without a round while the hub holds what it held when the last one
    /// agreed (`HubPollPlan.Mark`): on a quiet fleet of 10,000 machines, those rounds (a pull and
    /// the digest, 33 a second) would cost the hub a few per cent of a core.
    func waitForChange(
        on hub: HubNamespace, as replica: ReplicaID, from counter: Int64, poll: inout PollSchedule,
        checks: inout CheckSchedule, call: inout HubPollCall, agreedMark: HubPollPlan.Mark?
    ) throws(SettingsError) {
        while !isStopped {
            let checkIn = checks.timeUntilDue(sequence: settings.sequence, counter: counter)
            if checkIn == .zero {
                let mark = follow(try hub.pollPlan(for: replica), schedule: &poll).mark
                guard let agreedMark, mark.matches(agreedMark), mark.counter == counter,
                    checks.renewWithoutComparing(sequence: settings.sequence)
                else { return }
                update { $0.comparisonsSpared += 1 }
                continue
            }
            let wait = min(poll.nextWait(), checkIn ?? .seconds(Self.safetyNetInterval))
            if wake.wait(seconds: wait.seconds) {
                let asked = verifyRequests > checks.verifyRequestsSeen
                if isStopped || asked || status.pendingUp > 0 { return }
                continue
            }
            let polled = try hub.poll(from: counter, call: &call)
            update { status in
                status.lastContactMilliseconds = settings.configuration.clock()
                status.polls += 1
                if polled.byCall { status.pollCalls += 1 }
            }
            count(hub.connection)
            // Moved: the round that follows pulls, and says how fast to poll next.
            guard !polled.moved else { return }
            poll.quiet()
            update { $0.pollSeconds = poll.interval.seconds }
        }
    }

    /// The poll plan read: the schedule follows it, and the status shows it. Returns it.
    @discardableResult
    func follow(_ plan: HubPollPlan, schedule: inout PollSchedule) -> HubPollPlan {
        let before = schedule.longest
        schedule.follow(plan)
        if schedule.longest != before {
            logger?.log(
                .info,
                "hub namespace with \(plan.replicas) machines at the hub's \(plan.rate) polls a second: polling at most every \(schedule.longest.seconds) s"
            )
        }
        update { status in
            (status.pollReplicas, status.pollRate) = (plan.replicas, plan.rate)
            status.longestPollSeconds = schedule.longest.seconds
        }
        return plan
    }

    /// After a notification: waits until `notificationInterval` has passed since the round began
    /// (a local change still wakes it at once), then takes every notification waiting, so a burst
    /// of them, or a flood, costs one round.
    func coalesceNotifications(on connection: PostgresConnection, roundStarted: Deadline)
        throws(SettingsError)
    {
        let elapsed = (Deadline.now - roundStarted).seconds
        if elapsed < Self.notificationInterval { wake.wait(seconds: Self.notificationInterval - elapsed) }
        _ = try connection.notifications()
    }
}
