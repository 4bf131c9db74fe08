import Foundation
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsStore
@testable import SettingsSync
@testable import SettingsWire

@Suite("Hub polling: settingsd's URL options, the poll interval, and when a polling link compares")
struct HubPollingTests {
    @Test("settingsd_ options leave a URI's query and reach settingsd, decoded; libpq's stay as written")
    func uriOptions() throws {
        let url = HubURL(
            "postgresql://me@db:6432/settings?sslmode=verify-full&settingsd_pool=transaction&settingsd_poll_max=2%2E5&application_name=x"
        )
        #expect(url.conninfo == "postgresql://me@db:6432/settings?sslmode=verify-full&application_name=x")
        #expect(try url.pooling(default: .auto) == .transaction)
        #expect(try url.pollInterval(default: 0.25...5) == 0.25...2.5)
        #expect(HubURL("postgresql://db/s?settingsd_pool=session").conninfo == "postgresql://db/s")
        #expect(HubURL("postgresql://db/s").options.isEmpty)
    }

    @Test("settingsd_ options leave a key=value string, quoted values and escapes read as libpq reads them")
    func keywordOptions() throws {
        let url = HubURL(
            #"host=/run/pg  password='a b\'c' settingsd_pool = 'transaction' dbname=s settingsd_poll_min=0.1"#
        )
        #expect(url.conninfo == #"host=/run/pg password='a b\'c' dbname=s"#)
        #expect(url.options == ["pool": "transaction", "poll_min": "0.1"])
        #expect(try url.pollInterval(default: 0.25...5) == 0.1...5)
        #expect(PostgresConnectionString.check(url.conninfo) == nil)
        // What libpq cannot read is left for libpq to refuse, with its reason.
        #expect(HubURL("host").conninfo == "host")
    }

    @Test("a bad settingsd_ option is refused with its name and what it must be")
    func badOptions() {
        let cases: [(String, String)] = [
            ("host=/x settingsd_pool=pgbouncer", "settingsd_pool is 'pgbouncer'"),
            ("host=/x settingsd_poll_max=soon", "settingsd_poll_max is 'soon'"),
            ("host=/x settingsd_poll_min=0", "settingsd_poll_min is '0'"),
            ("host=/x settingsd_poll_min=9 settingsd_poll_max=2", "over settingsd_poll_max"),
        ]
        for (text, message) in cases {
            let url = HubURL(text)
            #expect {
                _ = try url.pooling(default: .auto)
                _ = try url.pollInterval(default: 0.25...5)
            } throws: { error in
                (error as? SettingsError)?.message.contains(message) == true
            }
        }
        let settings = Settings(inMemoryWith: .init())
        #expect(throws: SettingsError.self) {
            _ = try settings.sync(withHub: HubConfiguration(url: "host=/x settingsd_pool=pgbouncer"))
        }
    }

    @Test(
        "the interval starts at the least, doubles while quiet up to the most, halves on another's change, and waits no longer than it"
    )
    func pollSchedule() {
        var schedule = PollSchedule(bounds: 0.25...5)
        var intervals: [Double] = []
        for _ in 0..<8 {
            intervals.append(schedule.interval)
            let wait = schedule.nextWait()
            #expect(wait <= schedule.interval && wait >= schedule.interval * PollSchedule.shortestWait)
            schedule.quiet()
        }
        #expect(intervals == [0.25, 0.5, 1, 2, 4, 5, 5, 5])
        schedule.heard()
        #expect(schedule.interval == 2.5, "another's change halves the interval")
        schedule.heard()
        schedule.heard()
        schedule.heard()
        #expect(schedule.interval == 0.3125)
        schedule.heard()
        #expect(schedule.interval == 0.25, "never below the least")
        schedule.quiet()
        schedule.active()
        #expect(schedule.interval == 0.25, "a push of its own: the least at once")
    }

    @Test("a polling link compares on its safety net and when forced, not after every change")
    func pollingComparisons() {
        var polling = CheckSchedule(safetyNet: .seconds(300), comparesAfterChanges: false)
        var listening = CheckSchedule(safetyNet: .seconds(30), comparesAfterChanges: true)
        let first = polling.isDue(sequence: 1, counter: 1, now: .at(1_000))
        #expect(first, "forced at first")
        polling.checked(sequence: 1, counter: 1, took: .milliseconds(1), agreed: true, now: .at(1_000))
        listening.checked(sequence: 1, counter: 1, took: .milliseconds(1), agreed: true, now: .at(1_000))
        let afterChange = polling.isDue(sequence: 5, counter: 9, now: .at(2_000))
        let quietLater = polling.isDue(sequence: 5, counter: 9, now: .at(100_000))
        let onSafetyNet = polling.isDue(sequence: 5, counter: 9, now: .at(302_000))
        #expect(!afterChange && !quietLater && onSafetyNet)
        _ = listening.isDue(sequence: 5, counter: 9, now: .at(2_000))
        let listeningAfterQuiet = listening.isDue(sequence: 5, counter: 9, now: .at(2_400))
        #expect(listeningAfterQuiet)
        polling.checked(sequence: 5, counter: 9, took: .milliseconds(1), agreed: true, now: .at(302_000))
        polling.isForced = true
        let forced = polling.isDue(sequence: 5, counter: 9, now: .at(302_100))
        #expect(forced)
    }

    @Test(
        "a routine comparison is spared only when none was asked for, none diverged, and the replica is where it compared"
    )
    func sparedComparisons() {
        var checks = CheckSchedule(safetyNet: .seconds(300), comparesAfterChanges: false)
        let first = checks.renewWithoutComparing(sequence: 1, now: .at(1_000))
        #expect(!first, "the first comparison of a connection always runs")
        checks.checked(sequence: 1, counter: 1, took: .milliseconds(1), agreed: true, now: .at(1_000))
        _ = checks.isDue(sequence: 1, counter: 1, now: .at(2_000))
        let due = checks.isDue(sequence: 1, counter: 1, now: .at(301_000))
        let spared = checks.renewWithoutComparing(sequence: 1, now: .at(301_000))
        let dueAgain = checks.isDue(sequence: 1, counter: 1, now: .at(302_000))
        #expect(due && spared && !dueAgain, "the safety net starts again from the spared one")
        let movedOn = checks.renewWithoutComparing(sequence: 2, now: .at(601_000))
        #expect(!movedOn, "the replica changed since it compared")
        checks.checked(sequence: 2, counter: 1, took: .milliseconds(1), agreed: false, now: .at(601_000))
        let diverged = checks.renewWithoutComparing(sequence: 2, now: .at(700_000))
        #expect(!diverged, "a divergence is confirmed by comparing")
        checks.checked(sequence: 2, counter: 1, took: .milliseconds(1), agreed: true, now: .at(700_000))
        checks.isForced = true
        let asked = checks.renewWithoutComparing(sequence: 2, now: .at(1_000_000))
        #expect(!asked, "one asked for (sync --wait, a rewind) always runs")
    }
}

@Suite("Hub polling under load: the longest interval stretches with the hub's transactions a second")
struct PollStretchTests {
    /// A schedule at its longest interval, its first reading of the hub's load taken at time 0.
    private func quietSchedule(budget: Double) -> PollSchedule {
        var schedule = PollSchedule(bounds: 0.25...5, budget: budget)
        while !schedule.isAtLongest { schedule.quiet() }
        #expect(schedule.readsLoad, "the first quiet poll at the longest reads the load")
        schedule.measured(transactions: 1_000, at: 0)
        return schedule
    }

    /// Twelve quiet polls (the first `checkedQuietly` of them quiet checks of `kind`), then a
    /// reading of `transactions` at `now`.
    private func reading(
        _ schedule: inout PollSchedule, transactions: Int64, at now: Double, checkedQuietly: Int = 0,
        by kind: HubQuietCheck.Kind = .statement
    ) {
        for poll in 0..<PollSchedule.pollsPerLoadReading {
            #expect(!schedule.readsLoad, "poll \(poll) reads no load")
            schedule.quiet(checkedBy: poll < checkedQuietly ? kind : nil)
        }
        #expect(schedule.readsLoad)
        schedule.measured(transactions: transactions, at: now)
    }

    @Test(
        "over the budget it stretches so the rate would fall to nine tenths, at most twofold a reading; the interval follows"
    )
    func stretches() {
        var schedule = quietSchedule(budget: 100)
        reading(&schedule, transactions: 1_000 + 300 * 60, at: 60)
        #expect(schedule.hubRate == 300)
        #expect(schedule.stretch == PollSchedule.largestStep, "300 / 90 would be 3.3 times")
        #expect(schedule.interval == 5, "the interval grows by quiet polls, not at once")
        schedule.quiet()
        #expect(schedule.isAtLongest && schedule.interval == 10)
        // Still over (the fleet's links stretched by no more either): toward nine tenths.
        reading(&schedule, transactions: 1_000 + 300 * 60 + 150 * 60, at: 120)
        #expect(abs(schedule.stretch - 2 * 150 / 90) < 1e-9)
    }

    @Test(
        "quiet checks count at what they cost: all by statement, the rate weighs three fifths; all by call, two fifths"
    )
    func quietChecksWeighLess() {
        // Each time two readings in a row over the budget, under twice it: the second stretches.
        let all = PollSchedule.pollsPerLoadReading
        var called = quietSchedule(budget: 100)
        reading(&called, transactions: 1_000 + 400 * 60, at: 60, checkedQuietly: all, by: .call)
        reading(&called, transactions: 1_000 + 800 * 60, at: 120, checkedQuietly: all, by: .call)
        #expect(abs(called.stretch - 400 * 0.4 / 90) < 1e-9)
        var checked = quietSchedule(budget: 100)
        reading(&checked, transactions: 1_000 + 250 * 60, at: 60, checkedQuietly: all)
        reading(&checked, transactions: 1_000 + 500 * 60, at: 120, checkedQuietly: all)
        let weighed = 250 * 0.6 / 90
        #expect(abs(checked.stretch - weighed) < 1e-9)
        // The share is counted afresh for each reading: polls of the counter alone weigh in full.
        while !checked.isAtLongest { checked.quiet() }
        reading(&checked, transactions: 1_000 + 500 * 60 + 150 * 60, at: 180)
        #expect(abs(checked.stretch - weighed * 150 / 90) < 1e-9)
        var half = quietSchedule(budget: 100)
        reading(&half, transactions: 1_000 + 150 * 60, at: 60, checkedQuietly: all / 2)
        reading(&half, transactions: 1_000 + 300 * 60, at: 120, checkedQuietly: all / 2)
        #expect(abs(half.stretch - 150 * (1 + 0.6) / 2 / 90) < 1e-9)
    }

    @Test(
        "one reading over the budget but under twice it stretches nothing (a fleet's pulls after a change); two in a row do"
    )
    func stretchesOnSustainedLoad() {
        var schedule = quietSchedule(budget: 100)
        reading(&schedule, transactions: 1_000 + 150 * 60, at: 60)
        #expect(schedule.stretch == 1, "one reading at 1.5 times the budget")
        reading(&schedule, transactions: 1_000 + 150 * 60 + 80 * 60, at: 120)
        reading(&schedule, transactions: 1_000 + 150 * 60 + 80 * 60 + 150 * 60, at: 180)
        #expect(schedule.stretch == 1, "a reading within the budget between two over it")
        reading(&schedule, transactions: 1_000 + 150 * 60 + 80 * 60 + 300 * 60, at: 240)
        #expect(abs(schedule.stretch - 150 / 90) < 1e-9, "the second in a row")
        var reset = quietSchedule(budget: 100)
        reading(&reset, transactions: 1_000 + 150 * 60, at: 60)
        reading(&reset, transactions: 10, at: 120)
        reading(&reset, transactions: 10 + 150 * 60, at: 180)
        #expect(reset.stretch == 1, "a count that went back starts afresh")
    }

    @Test(
        "between nine tenths of the budget and the budget nothing changes; under nine tenths it shrinks toward nine tenths, by at most half, never below the most"
    )
    func shrinks() {
        var schedule = quietSchedule(budget: 100)
        var base: Int64 = 1_000
        for minute in 1...4 {
            base += 2_000 * 60
            reading(&schedule, transactions: base, at: Double(minute) * 60)
            while !schedule.isAtLongest { schedule.quiet() }
        }
        #expect(schedule.stretch == PollSchedule.maximumStretch, "never over twelve times the most")
        reading(&schedule, transactions: base + 95 * 60, at: 300)
        #expect(schedule.stretch == PollSchedule.maximumStretch, "95 a second is within a budget of 100")
        reading(&schedule, transactions: base + 95 * 60 + 81 * 60, at: 360)
        #expect(
            abs(schedule.stretch - PollSchedule.maximumStretch * 81 / 90) < 1e-9, "81 a second: toward 90")
        reading(&schedule, transactions: base + 95 * 60 + 81 * 60 + 90 * 60, at: 420)
        #expect(
            abs(schedule.stretch - PollSchedule.maximumStretch * 81 / 90) < 1e-9, "90 a second is the goal")
        reading(&schedule, transactions: base + 95 * 60 + 171 * 60 + 1 * 60, at: 480)
        #expect(
            abs(schedule.stretch - PollSchedule.maximumStretch * 81 / 90 / 2) < 1e-9, "at most half at a time"
        )
        #expect(schedule.interval <= schedule.longest)
        for minute in 9...13 {
            reading(
                &schedule, transactions: base + 95 * 60 + 172 * 60 + Int64(minute), at: Double(minute) * 60)
        }
        #expect(schedule.stretch == 1 && schedule.longest == 5)
    }

    @Test(
        "a fleet of links that each measure the same hub settles within the band, from polling too often or too seldom",
        arguments: [2.5, 0.8, 0.65, 0.3])
    func fleetSettles(startingShare: Double) {
        // 1,000 links polling one hub by quiet checks alone (fast-path calls), so each weighs the
        // rate it reads at their cost; the hub's rate is what the fleet's longest intervals make it.
        let (links, cost) = (1_000, HubQuietCheck.Kind.call.cost)
        let meanWait = 5 * (1 + PollSchedule.shortestWait) / 2
        // A budget the fleet runs at two and a half times when it polls every 5 s.
        let budget = Double(links) / meanWait * cost / 2.5
        func share(_ fleet: [PollSchedule]) -> Double {
            fleet.reduce(0) { $0 + 1 / ($1.longest * meanWait / 5) } * cost / budget
        }
        func fresh() -> PollSchedule {
            var schedule = PollSchedule(bounds: 0.25...5, budget: budget)
            while !schedule.isAtLongest { schedule.quiet() }
            schedule.measured(transactions: 0, at: 0)
            return schedule
        }
        // Where the fleet starts: a busy start-up stretched every link alike, to the stretch at
        // which it runs at `startingShare` of the budget (1, unstretched, for 2.5): readings of
        // a rate over the budget, each stretching at most twofold (the first in a row, under
        // twice the budget, stretches nothing).
        let start = share([PollSchedule](repeating: fresh(), count: links)) / startingShare
        var (transactions, now) = (0.0, 0.0)
        var stretched = fresh()
        if start > 1.2 {
            let steps = Int((log(start) / log(PollSchedule.largestStep)).rounded(.up))
            let step = pow(start, 1 / Double(steps))
            for _ in 0...steps {
                for _ in 0..<PollSchedule.pollsPerLoadReading { stretched.quiet(checkedBy: .call) }
                now += 100
                transactions += step * PollSchedule.goal * budget / cost * 100
                stretched.measured(transactions: Int64(transactions), at: now)
            }
        }
        var fleet = [PollSchedule](repeating: stretched, count: links)
        #expect(abs(share(fleet) - startingShare) < 0.05, "starts at \(share(fleet))")
        // Then each link in turn reads the load over its last twelve polls, a minute apart.
        for _ in 0..<8 {
            for index in fleet.indices {
                let step = 60 / Double(links)
                transactions += share(fleet) * budget / cost * step
                now += step
                for _ in 0..<PollSchedule.pollsPerLoadReading { fleet[index].quiet(checkedBy: .call) }
                fleet[index].measured(transactions: Int64(transactions), at: now)
            }
        }
        #expect(
            PollSchedule.settledBand.contains(share(fleet)),
            "from \(startingShare) of the budget the fleet settled at \(share(fleet))")
    }

    @Test("a count that went back, or a reading too soon after the last, stretches nothing")
    func resets() {
        var schedule = quietSchedule(budget: 100)
        reading(&schedule, transactions: 10, at: 60)
        #expect(schedule.stretch == 1 && schedule.hubRate == nil, "a reset starts a new measure")
        reading(&schedule, transactions: 100_000, at: 60.5)
        #expect(schedule.stretch == 1, "half a second is too short to measure")
        reading(&schedule, transactions: 100_000, at: 70)
        #expect(schedule.hubRate.map { abs($0 - 99_990 / 10) < 1e-6 } == true, "measured from the kept base")
    }

    @Test("no budget, or a hub whose statistics cannot be read: never reads the load, never stretches")
    func withoutBudget() {
        var unbudgeted = PollSchedule(bounds: 0.25...5, budget: 0)
        while !unbudgeted.isAtLongest { unbudgeted.quiet() }
        #expect(!unbudgeted.readsLoad)
        var schedule = quietSchedule(budget: 100)
        reading(&schedule, transactions: 1_000_000, at: 60)
        #expect(schedule.stretch > 1)
        schedule.stopReadingLoad()
        #expect(schedule.stretch == 1 && schedule.longest == 5 && !schedule.readsLoad)
    }

    @Test("settingsd_poll_budget is read from the URL; a bad one is refused with what it must be")
    func budgetOption() throws {
        #expect(try HubURL("host=/x settingsd_poll_budget=250").pollBudget(default: 600) == 250)
        #expect(try HubURL("host=/x settingsd_poll_budget=0").pollBudget(default: 600) == 0)
        #expect(try HubURL("host=/x").pollBudget(default: 600) == 600)
        for bad in ["-1", "many", "inf", "1e9"] {
            #expect {
                _ = try HubURL("host=/x settingsd_poll_budget=\(bad)").pollBudget(default: 600)
            } throws: { error in
                (error as? SettingsError)?.message.contains("settingsd_poll_budget is '\(bad)'") == true
            }
        }
    }
}

@Suite("Hub quiet checks: when a look at the server's snapshot may stand in for the counter")
struct QuietCheckTests {
    private func look(_ snapshot: String, started: String = "2026-12-06 04:00:00+00") -> HubQuietCheck.Look? {
        HubQuietCheck.Look(snapshot: snapshot, started: started)
    }

    @Test(
        "a baseline only after two polls saw the same look and counter; a changed look ends it until two agree again"
    )
    func baselineNeedsTwoQuietPolls() throws {
        var quiet = HubQuietCheck()
        #expect(quiet.baseline == nil)
        quiet.record(look("10:12:10"), counter: 4)
        #expect(quiet.baseline == nil, "one look says nothing of the interval after it")
        quiet.record(look("10:12:10"), counter: 5)
        #expect(quiet.baseline == nil, "the same look with another counter is not one server's quiet")
        quiet.record(look("10:12:10"), counter: 5)
        let baseline = try #require(quiet.baseline)
        #expect(baseline.counter == 5)
        let unchanged = quiet.confirms(look("10:12:10"))
        #expect(unchanged)
        let finished = quiet.confirms(look("12:12:"))
        #expect(!finished, "the running transaction finished")
        let again = quiet.confirms(look("10:12:10"))
        #expect(quiet.baseline == nil && !again, "no baseline until two agree again")
        quiet.record(look("12:12:"), counter: 6)
        quiet.record(look("12:12:"), counter: 6)
        #expect(quiet.baseline?.counter == 6)
        let restarted = quiet.confirms(look("12:12:", started: "2026-12-06 05:00:00+00"))
        #expect(!restarted, "a restarted server")
    }

    @Test(
        "a hub whose snapshot moved at every poll: the link rests from looking, twice as long each time, until two looks agree"
    )
    func restsFromLookingOnABusyHub() {
        var quiet = HubQuietCheck()
        var next = 0
        /// Looks that each differ from the one before.
        func moving(_ count: Int) {
            for _ in 0..<count {
                next += 1
                quiet.record(look("\(next):\(next):"), counter: 1)
            }
        }
        /// The polls the link rests, at most `limit`.
        func rest(limit: Int = 1_000) -> Int {
            var polls = 0
            while !quiet.looks && polls < limit {
                quiet.readWithoutLooking()
                polls += 1
            }
            return polls
        }
        // Two moves, then an agreement: the count starts again.
        moving(3)
        quiet.record(look("\(next):\(next):"), counter: 1)
        moving(HubQuietCheck.restAfter - 1)
        #expect(quiet.looks, "one move short of a rest")
        moving(1)
        #expect(!quiet.looks && quiet.baseline == nil, "resting: the counter alone")
        #expect(rest() == HubQuietCheck.firstRest)
        // After a rest the first look has nothing to differ from: restAfter + 1 looks to rest again.
        moving(HubQuietCheck.restAfter + 1)
        #expect(rest() == 2 * HubQuietCheck.firstRest, "the hub is still busy: a longer rest")
        for _ in 0..<10 {
            moving(HubQuietCheck.restAfter + 1)
            _ = rest()
        }
        moving(HubQuietCheck.restAfter + 1)
        #expect(rest() == HubQuietCheck.longestRest)
        quiet.record(look("quiet"), counter: 1)
        quiet.record(look("quiet"), counter: 1)
        #expect(quiet.baseline?.look == look("quiet"), "quiet checks again once two agree")
        moving(HubQuietCheck.restAfter)
        #expect(rest() == HubQuietCheck.firstRest, "an agreement starts the rests short again")
    }

    @Test(
        "an agreed comparison is vouched for once a later look matches the one before it, until a look differs or is missing"
    )
    func vouchesForAgreement() {
        var quiet = HubQuietCheck()
        quiet.compared(agreed: true)
        #expect(!quiet.vouchesForAgreement, "no look before the comparison")
        quiet.record(look("7:7:"), counter: 3)
        quiet.compared(agreed: true)
        #expect(!quiet.vouchesForAgreement, "nothing seen since the comparison yet")
        quiet.record(look("7:7:"), counter: 3)
        #expect(quiet.vouchesForAgreement, "no transaction finished around the comparison")
        let confirmed = quiet.confirms(look("7:7:"))
        #expect(confirmed && quiet.vouchesForAgreement, "a quiet check keeps it")
        _ = quiet.confirms(look("7:8:7"))
        #expect(!quiet.vouchesForAgreement, "a transaction began")
        quiet.record(look("8:8:"), counter: 3)
        quiet.record(look("8:8:"), counter: 3)
        #expect(!quiet.vouchesForAgreement, "an agreement is only vouched for from the look before it")
        quiet.compared(agreed: false)
        quiet.record(look("8:8:"), counter: 3)
        #expect(!quiet.vouchesForAgreement, "a comparison that repaired vouches for nothing")
        quiet.compared(agreed: true)
        _ = quiet.confirms(nil)
        #expect(!quiet.vouchesForAgreement, "a look that could not be read")
        quiet.record(look("8:8:"), counter: 3)
        quiet.compared(agreed: true)
        quiet.record(look("8:8:", started: "2026-12-06 09:00:00+00"), counter: 3)
        #expect(!quiet.vouchesForAgreement, "a restarted or failed-over server")
        quiet.compared(agreed: true)
        quiet.readWithoutLooking()
        quiet.record(look("8:8:", started: "2026-12-06 09:00:00+00"), counter: 3)
        #expect(!quiet.vouchesForAgreement, "a poll without a look leaves a gap")
    }

    @Test("a missing look, or one longer than a quiet server's, is no baseline; a refusal ends quiet checks")
    func hostileOrMissingLooks() {
        #expect(HubQuietCheck.Look(snapshot: nil, started: "x") == nil)
        #expect(HubQuietCheck.Look(snapshot: "1:2:", started: nil) == nil)
        #expect(look(String(repeating: "1,", count: HubQuietCheck.longestLook)) == nil)
        var quiet = HubQuietCheck()
        quiet.record(look("1:1:"), counter: 1)
        quiet.record(nil, counter: 1)
        quiet.record(look("1:1:"), counter: 1)
        #expect(quiet.baseline == nil, "a missing look between two equal ones breaks the spell")
        quiet.record(look("1:1:"), counter: 1)
        #expect(quiet.baseline != nil)
        let unread = quiet.confirms(nil)
        #expect(!unread, "a quiet check that read no look vouches for nothing")
        quiet.becomeUnavailable()
        quiet.record(look("1:1:"), counter: 1)
        quiet.record(look("1:1:"), counter: 1)
        #expect(!quiet.isAvailable && quiet.baseline == nil)
    }
}

extension Deadline {
    /// `milliseconds` after the clock's start, for schedules driven by hand.
    fileprivate static func at(_ milliseconds: UInt64) -> Deadline {
        Deadline(uptimeNanoseconds: milliseconds * 1_000_000)
    }
}
