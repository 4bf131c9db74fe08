import SettingsStore
import SettingsWire

/// A polling link's cheaper question for a quiet hub: has any transaction finished on the hub's
/// server since the last look? When none has, the namespace's counter cannot have moved, and the
/// poll need not read it.
///
/// Every poll that reads the counter also reads, in the same statement and so the same snapshot,
/// the server's snapshot (`txid_current_snapshot()`: the transactions running, and the first not
/// yet finished) and when the server started. Two equal snapshots mean no transaction committed
/// in between: one that was running would have left the list of running ones, and one begun
/// since carries a number at or past the first unfinished, which its commit would have moved. The
/// start time tells a restarted, restored or failed-over server apart even where its numbers
/// coincide. Once two polls in a row saw the same snapshot (the hub was quiet for a whole
/// interval), the next polls ask for the snapshot alone, which costs PostgreSQL about three fifths
/// of the counter's statement (its row, its index and row-level security), until one finds it
/// changed; that poll reads the counter at once, in a second statement. A busy hub, whose
/// snapshot changes between polls, keeps reading the counter; and where it moved at each of
/// `restAfter` polls in a row (on a hub that serves many people, somebody is always writing), the
/// link rests: it reads the counter without the look for a few polls, twice as many after each
/// rest that ended in more moves (up to `longestRest`), so that such a hub pays almost nothing
/// for looks that never agree (their columns cost about a fifth of the counter's statement),
/// while a hub that falls quiet after a burst soon gets quiet checks again.
///
/// Why two statements on a change rather than one that reads the counter only when the snapshot
/// moved (`CASE WHEN … THEN NULL ELSE settingsd.counter(…) END`): PostgreSQL parses and plans a
/// simple query afresh each time, and that longer statement cost 136–178 µs of server CPU against
/// 74–91 µs for the snapshot alone and 113–127 µs for the counter alone (pgbench, 2,000 a
/// second), so it cost more than the counter even when the counter was skipped.
///
/// The same reasoning spares a fleet its routine comparisons of digests: when every look since a
/// comparison agreed matched the one taken before it, no transaction finished around or after
/// that comparison, so the hub still holds what it summed (`vouchesForAgreement`); a hand edit,
/// a restore or a failover moves the look, and the comparison runs.
///
/// On a hub at schema 13 the quiet check is not a statement but a fast-path call of
/// `settingsd.unmoved(look)` by its function number (`HubSchema.quietCall`), which costs the server
/// about half as much: nothing to parse or plan. The number comes with a poll that reads the look
/// (one more column), and again after the server's start time changed (a restore may have
/// renumbered the function); a call the hub refuses sends the link back to the look's statement,
/// for good once it was refused twice or denied.
///
/// Lives as long as one connection: a new connection starts with no baseline.
package struct HubQuietCheck {
    /// A poll's look at the server: its snapshot and start time, as text.
    package struct Look: Equatable {
        package let snapshot: String
        package let started: String

        /// A look from the hub, or nil when it is not one a quiet check can trust: missing, or
        /// longer than any snapshot of a quiet server (a busy one lists every running
        /// transaction; it is hub input, and is never kept large).
        package init?(snapshot: String?, started: String?) {
            guard let snapshot, let started,
                snapshot.utf8.count + started.utf8.count <= HubQuietCheck.longestLook
            else { return nil }
            self.snapshot = snapshot
            self.started = started
        }

        /// The look as `settingsd.unmoved(look)` takes it: the snapshot, a space, the start time.
        package var text: String { snapshot + " " + started }
    }

    /// How a quiet check asked, and what it costs the server beside a poll of the counter, which
    /// the poll budget weighs (`PollSchedule`). Measured through PgBouncer at 2,000 a second from
    /// 200 connections, 10,000 roles in the cluster, server CPU from `/proc`: the counter's
    /// statement 47–59 µs, the look's statement 31–42 µs, the fast-path call 20–21 µs; under
    /// pgbench, straight to PostgreSQL, the look's statement cost three fifths of the counter's.
    package enum Kind: Sendable {
        /// The look's statement (a hub before schema 13, or a call the hub refused).
        case statement
        /// A fast-path call of `settingsd.unmoved(look)`.
        case call

        /// The share of a counter's poll it costs the server.
        package var cost: Double {
            switch self {
            case .statement: 0.6
            case .call: 0.4
            }
        }
    }

    /// What the link knows of `settingsd.unmoved(text)`, the quiet check's fast-path function.
    package enum Function: Equatable {
        /// Not asked yet, or to be asked again: the next poll that reads the look asks its number.
        case unknown
        /// Its number, as read while the server had started at `started`.
        case numbered(UInt32, started: String)
        /// Not there (a hub before schema 13), or refused: quiet checks are statements.
        case unusable
    }

    /// The most bytes of a look a link keeps.
    package static let longestLook = 512

    /// Looks in a row that differed from the one before, after which the link rests from looking.
    package static let restAfter = 4
    /// The polls the first rest lasts (they read the counter without a look); each rest after it
    /// with no two agreeing looks in between lasts twice as long, up to `longestRest`.
    package static let firstRest = 4
    /// The polls the longest rest lasts.
    package static let longestRest = 64

    /// What the last poll that read the counter saw, with the counter.
    private var last: (look: Look, counter: Int64)?
    /// Whether the last two polls that read the counter saw the same look.
    private var isQuiet = false
    /// Looks in a row that differed from the one before.
    private var moves = 0
    /// Polls left in a rest from looking, and how long the last rest was (0: two looks agreed
    /// since).
    private var resting = 0
    private var lastRest = 0
    /// False once the hub refused the snapshot's functions: polls read the counter alone.
    package private(set) var isAvailable = true
    /// The look before the last comparison that agreed, while every look since matched it, and
    /// whether one since did (nil: none agreed, or the server moved since).
    private var agreed: (look: Look, confirmed: Bool)?
    /// The quiet check's fast-path function, as far as the link knows it.
    package private(set) var function = Function.unknown
    /// Fast-path calls in a row the hub refused.
    private var refusedCalls = 0
    /// Calls refused in a row after which the link stops calling.
    private static let refusalsTolerated = 2

    package init() {}

    /// Whether the next poll that reads the counter reads the look with it: not where the hub
    /// refused the snapshot's functions, nor during a rest.
    package var looks: Bool { isAvailable && resting == 0 }

    /// The counter a quiet check vouches for while the snapshot stays `baseline`, or nil when
    /// the next poll should read the counter.
    package var baseline: (look: Look, counter: Int64)? {
        isAvailable && isQuiet ? last : nil
    }

    /// Whether the hub's server has finished no transaction since before the last comparison
    /// that agreed (`compared(agreed:)`): a look taken after it matched the one taken before,
    /// and every look since did too. The comparison's sums then still hold, and a routine one
    /// (not one asked for) need not run again.
    package var vouchesForAgreement: Bool { agreed?.confirmed ?? false }

    /// A comparison of digests ran: when it `agreed`, the look before it vouches for it once a
    /// later one matches.
    package mutating func compared(agreed: Bool) {
        self.agreed = agreed ? last.map { ($0.look, false) } : nil
    }

    /// A look the link read: it confirms the last agreement, or ends it.
    private mutating func saw(_ look: Look?) {
        guard let agreement = agreed else { return }
        agreed = look == agreement.look ? (agreement.look, true) : nil
    }

    /// A poll read `counter` and `look` in one statement.
    package mutating func record(_ look: Look?, counter: Int64) {
        saw(look)
        guard let look else {
            last = nil
            isQuiet = false
            return
        }
        checkNumber(against: look)
        isQuiet = last.map { $0.look == look && $0.counter == counter } ?? false
        if let last, last.look == look {
            (moves, lastRest) = (0, 0)
        } else if last != nil {
            moves += 1
        }
        last = (look, counter)
        if moves >= Self.restAfter {
            lastRest = lastRest == 0 ? Self.firstRest : min(2 * lastRest, Self.longestRest)
            (resting, moves, last, isQuiet) = (lastRest, 0, nil, false)
        }
    }

    /// A poll read the counter without a look, during a rest.
    package mutating func readWithoutLooking() {
        resting = max(0, resting - 1)
        agreed = nil
    }

    /// A quiet check saw `look`: whether nothing finished since the baseline. When something
    /// did, the next polls read the counter again until the hub is quiet once more.
    package mutating func confirms(_ look: Look?) -> Bool {
        saw(look)
        guard let baseline, look == baseline.look else {
            isQuiet = false
            return false
        }
        return true
    }

    /// The number of the function a quiet check calls, when the link has one for this server.
    package var callable: UInt32? {
        guard isAvailable, case .numbered(let number, _) = function else { return nil }
        return number
    }

    /// Whether the next poll that reads the look should ask the function's number too.
    package var asksFunction: Bool { isAvailable && function == .unknown }

    /// A poll that read `look` asked the function's number too: `number` (nil: the hub has no
    /// such function, or sent no number a function can have).
    package mutating func numbered(_ number: Int64?, under look: Look) {
        guard let number, let value = UInt32(exactly: number), value != 0 else {
            function = .unusable
            return
        }
        function = .numbered(value, started: look.started)
    }

    /// A fast-path call answered (whatever it said).
    package mutating func callAnswered() {
        refusedCalls = 0
    }

    /// The hub refused a fast-path call with an error: the number is asked again (a restore may
    /// have renumbered the function) unless the call was `denied` or refused too often.
    package mutating func callRefused(denied: Bool) {
        refusedCalls += 1
        function = denied || refusedCalls >= Self.refusalsTolerated ? .unusable : .unknown
    }

    /// A restarted, restored or failed-over server may number the function differently: once a
    /// look shows a new start time, the number is asked again.
    private mutating func checkNumber(against look: Look) {
        if case .numbered(_, let started) = function, started != look.started { function = .unknown }
    }

    /// The hub refused the snapshot's functions (a role without EXECUTE on them).
    package mutating func becomeUnavailable() {
        isAvailable = false
        (last, isQuiet, agreed) = (nil, false, nil)
    }
}
