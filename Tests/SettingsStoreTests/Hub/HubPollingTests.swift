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
        #expect(
            try url.pollInterval(default: .milliseconds(250)...(.seconds(5))) == .milliseconds(
                250)...(.milliseconds(2_500)))
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
        #expect(
            try url.pollInterval(default: .milliseconds(250)...(.seconds(5))) == .milliseconds(
                100)...(.seconds(5)))
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
                _ = try url.pollInterval(default: .milliseconds(250)...(.seconds(5)))
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
        var schedule = PollSchedule(bounds: .milliseconds(250)...(.seconds(5)))
        var intervals: [Duration] = []
        for _ in 0..<8 {
            intervals.append(schedule.interval)
            let wait = schedule.nextWait()
            #expect(wait <= schedule.interval && wait >= schedule.interval * (1 - PollSchedule.jitter))
            schedule.quiet()
        }
        #expect(intervals == [250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000].map { .milliseconds($0) })
        schedule.heard()
        #expect(schedule.interval == .milliseconds(2_500), "another's change halves the interval")
        schedule.heard()
        schedule.heard()
        schedule.heard()
        #expect(schedule.interval == .microseconds(312_500))
        schedule.heard()
        #expect(schedule.interval == .milliseconds(250), "never below the least")
        schedule.quiet()
        schedule.active()
        #expect(schedule.interval == .milliseconds(250), "a push of its own: the least at once")
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

@Suite("Hub polling by formula: the longest interval is the namespace's machines over the hub's poll rate")
struct PollFormulaTests {
    private let floor = Duration.seconds(5)

    @Test(
        "machines / rate, never under the floor nor over the ceiling (nor the floor, where that is longer)",
        arguments: [
            (replicas: 0 as Int64, rate: 1_250 as Int64, seconds: 5.0),
            (10, 1_250, 5), (6_250, 1_250, 5), (10_000, 1_250, 8), (12_500, 1_250, 10),
            (100_000, 1_250, 80), (150_000, 1_250, 120), (1_000_000, 1_250, 120), (10_000, 1, 120),
            (10_000, 1_000_000, 5), (.max, 1_250, 120), (-5, 1_250, 5), (10_000, 0, 5), (10_000, -1, 5),
        ])
    func formula(replicas: Int64, rate: Int64, seconds: Double) {
        #expect(PollSchedule.longest(replicas: replicas, rate: rate, floor: floor) == .seconds(seconds))
    }

    @Test("a floor over the ceiling is the longest: the ceiling never shortens what the URL asks for")
    func floorOverCeiling() {
        #expect(PollSchedule.longest(replicas: 1, rate: 1_250, floor: .seconds(600)) == .seconds(600))
        #expect(PollSchedule.longest(replicas: 10_000_000, rate: 1, floor: .seconds(600)) == .seconds(600))
    }

    @Test(
        "a plan moves the longest interval: a quiet link takes it at once, a busy one grows to it by quiet polls, a smaller one applies at once"
    )
    func followsPlans() {
        var schedule = PollSchedule(bounds: .milliseconds(250)...(.seconds(5)))
        for _ in 0..<10 { schedule.quiet() }
        #expect(schedule.interval == .seconds(5) && schedule.isAtLongest)
        schedule.follow(HubPollPlan(counter: 7, edits: 0, replicas: 20_000, rate: 1_000))
        #expect(schedule.longest == .seconds(20))
        #expect(schedule.interval == .seconds(20) && schedule.isAtLongest, "a quiet link stays quiet")
        schedule.heard()
        #expect(schedule.interval == .seconds(10))
        schedule.follow(HubPollPlan(counter: 8, edits: 0, replicas: 40_000, rate: 1_000))
        #expect(schedule.longest == .seconds(40))
        #expect(
            schedule.interval == .seconds(10) && !schedule.isAtLongest, "a busy link grows by quiet polls")
        schedule.quiet()
        schedule.quiet()
        #expect(schedule.interval == .seconds(40) && schedule.isAtLongest)
        schedule.follow(HubPollPlan(counter: 8, edits: 0, replicas: 3, rate: 1_000))
        #expect(
            schedule.longest == .seconds(5) && schedule.interval == .seconds(5), "a smaller fleet at once")
    }

    @Test("what the hub says out of range is read as its defaults: no rate, a negative count, no edits count")
    func hostilePlans() {
        let plan = HubPollPlan(counter: 3, edits: -1, replicas: -40, rate: 0)
        #expect(plan.rate == HubPollPlan.defaultRate && plan.replicas == 0 && plan.mark.edits == nil)
        #expect(
            HubPollPlan(counter: 3, edits: 1, replicas: nil, rate: 2_000_000).rate == HubPollPlan.defaultRate)
        #expect(HubPollPlan(counter: 3, edits: 1, replicas: 9, rate: 1).rate == 1)
    }

    @Test("a mark vouches for another only with the same counter and the same known count of edits")
    func marks() {
        let mark = HubPollPlan.Mark(counter: 10, edits: 2)
        #expect(mark.matches(.init(counter: 10, edits: 2)))
        #expect(!mark.matches(.init(counter: 11, edits: 2)), "a push since")
        #expect(!mark.matches(.init(counter: 10, edits: 3)), "an edit by hand since")
        #expect(!HubPollPlan.Mark(counter: 10, edits: nil).matches(.init(counter: 10, edits: nil)))
    }

    @Test(
        "a fleet of links that follow their plans makes at most the hub's rate of polls a second, whatever its size"
    )
    func fleetRate() {
        for machines in [10, 1_000, 10_000, 50_000] {
            let plan = HubPollPlan(counter: 0, edits: 0, replicas: Int64(machines), rate: 1_250)
            var schedule = PollSchedule(bounds: .milliseconds(250)...(.seconds(5)))
            schedule.follow(plan)
            for _ in 0..<12 { schedule.quiet() }
            var total = Duration.zero
            for _ in 0..<1_000 { total += schedule.nextWait() }
            let meanWait = total.seconds / 1_000
            let rate = Double(machines) / meanWait
            // Each wait is shortened by a twentieth on average: the fleet makes some 5 % more.
            let most = max(Double(machines) / 5, 1_250) / (1 - PollSchedule.jitter / 2) * 1.01
            #expect(rate <= most, "\(machines) machines poll \(rate) times a second")
        }
    }
}

@Suite("Hub poll calls: when the poll is a fast-path call and when a statement")
struct HubPollCallTests {
    @Test("the number is asked first; a refusal asks it again, a second in a row or a denial ends calls")
    func states() {
        var call = HubPollCall()
        #expect(call.asksNumber && call.number == nil)
        call.numbered(4_242)
        #expect(call.number == 4_242 && !call.asksNumber)
        call.refused(denied: false)
        #expect(call.asksNumber, "a restore may have numbered the function anew")
        call.numbered(4_343)
        call.answered()
        call.refused(denied: false)
        #expect(call.asksNumber, "an answer between two refusals starts the count again")
        call.numbered(4_343)
        call.refused(denied: false)
        call.numbered(4_343)
        call.refused(denied: false)
        #expect(call.state == .unusable && call.number == nil && !call.asksNumber, "two in a row")
        var denied = HubPollCall()
        denied.numbered(7)
        denied.refused(denied: true)
        #expect(denied.state == .unusable)
    }

    @Test(
        "no number, zero, or one no function can have makes calls unusable",
        arguments: [nil, 0, -1, 1 << 40] as [Int64?])
    func badNumbers(number: Int64?) {
        var call = HubPollCall()
        call.numbered(number)
        #expect(call.state == .unusable)
    }
}

extension Deadline {
    /// `milliseconds` after the clock's start, for schedules driven by hand.
    fileprivate static func at(_ milliseconds: UInt64) -> Deadline {
        Deadline(uptimeNanoseconds: milliseconds * 1_000_000)
    }
}
