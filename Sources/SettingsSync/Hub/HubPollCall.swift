import SettingsStore
import SettingsWire

/// What a polling link knows of `settingsd.moved(name, bigint)`, the poll as a fast-path call.
///
/// A poll asks one thing: has the namespace's counter moved from the one the link holds? As a
/// statement, PostgreSQL parses, analyses and plans it at every poll (through a pooler in
/// transaction pooling nothing stays prepared), and a fleet's idle load is little else. As a
/// fast-path call (the protocol's function call message, libpq's `PQfn`) it names the function
/// by its number and passes its arguments: nothing to parse or plan, about half the server's
/// CPU of the statement through PgBouncer. The number comes with the statement that opens the
/// namespace, and again after a call the hub refused (a restore, or `hub init` run again, may
/// have numbered the function anew); two refusals in a row, or a denial, and the connection
/// polls with the counter's statement.
package struct HubPollCall: Equatable {
    /// What the link knows of the function.
    package enum State: Equatable {
        /// Not asked yet, or to be asked again: the next poll is the counter's statement, which
        /// asks the number too.
        case unknown
        /// Its number.
        case numbered(UInt32)
        /// Refused, or not there: polls are statements on this connection.
        case unusable
    }

    /// Calls refused in a row after which the link stops calling.
    package static let refusalsTolerated = 2

    package private(set) var state = State.unknown
    /// Calls refused in a row.
    private var refusals = 0

    package init() {}

    /// The function's number, when the next poll can be a call.
    package var number: UInt32? {
        guard case .numbered(let number) = state else { return nil }
        return number
    }

    /// Whether the next poll's statement should ask the function's number too.
    package var asksNumber: Bool { state == .unknown }

    /// The hub said the function's number: `number` (nil: the hub has no such function, or sent
    /// no number a function can have).
    package mutating func numbered(_ number: Int64?) {
        guard let number, let value = UInt32(exactly: number), value != 0 else {
            state = .unusable
            return
        }
        state = .numbered(value)
    }

    /// A call answered (whatever it said).
    package mutating func answered() {
        refusals = 0
    }

    /// The hub refused a call with an error: the number is asked again unless the call was
    /// `denied` or refused too often.
    package mutating func refused(denied: Bool) {
        refusals += 1
        state = denied || refusals >= Self.refusalsTolerated ? .unusable : .unknown
    }
}
