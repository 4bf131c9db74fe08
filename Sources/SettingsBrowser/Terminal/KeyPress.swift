/// One thing the person at the terminal did: a key, or a mouse button or wheel.
package enum KeyPress: Equatable, Sendable {
    /// A printable character.
    case character(Character)
    /// A letter held with Control (`control("c")` is Ctrl-C), other than the named keys.
    case control(Character)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, tab, backTab, escape, backspace, delete
    /// A mouse button pressed or the wheel turned, at a 0-based cell.
    case mouse(MouseEvent)
}

/// A mouse report (SGR form) at a 0-based row and column.
package struct MouseEvent: Equatable, Sendable {
    /// What the mouse did.
    package enum Action: Equatable, Sendable {
        case press, wheelUp, wheelDown
    }

    /// What the mouse did.
    package var action: Action
    /// The cell's row, from 0 at the top.
    package var row: Int
    /// The cell's column, from 0 at the left.
    package var column: Int
}
