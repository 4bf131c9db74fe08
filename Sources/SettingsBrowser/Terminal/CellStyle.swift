/// How a cell is drawn: a few attributes every terminal has, and one colour by its meaning
/// (the writer picks the escape for it, or an attribute instead on a monochrome terminal).
package struct CellStyle: Hashable, Sendable {
    /// What a colour says; the writer maps each to a terminal colour or, without colour, to an
    /// attribute.
    package enum Tone: Hashable, Sendable {
        /// Headings and the selected pane's title.
        case accent
        /// A value changed a moment ago.
        case changed
        /// A refusal or an error.
        case error
        /// Secondary text: types, marks, hints.
        case muted
        /// A value held by a lock or a mandatory policy.
        case locked
        /// A change staged, not written yet.
        case staged
    }

    /// Bold text.
    package var isBold = false
    /// Foreground and background swapped: the selection, bars.
    package var isReversed = false
    /// Underlined text.
    package var isUnderlined = false
    /// The colour's meaning, if any.
    package var tone: Tone?

    /// Nothing special.
    package static let plain = CellStyle()
    /// The selection and the title and status bars.
    package static let reversed = CellStyle(isReversed: true)
    /// Bold.
    package static let bold = CellStyle(isBold: true)

    /// A style of `tone`.
    package static func tone(_ tone: Tone) -> CellStyle {
        CellStyle(tone: tone)
    }

    /// This style reversed as well (the selected row keeps its tone).
    package var reversed: CellStyle {
        var style = self
        style.isReversed = true
        return style
    }
}
