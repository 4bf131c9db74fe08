/// The keys and marks, over the body (`?`).
package enum HelpPane {
    /// The help text, one line each.
    package static let lines: [String] = [
        "Keys",
        "  ↑ ↓  k j       move             PgUp PgDn  Home End   page, ends",
        "  → l  Enter     open a folder    ← h                   close, go up",
        "  /              search names, summaries and values (Esc clears)",
        "  :              go to a key or folder by its path",
        "  e  Enter       edit the value   d   delete (back to the default)",
        "  Tab            the key's history: Enter reverts to the chosen one",
        "  t              stage edits: w writes them in one transaction, x drops them",
        "  s              sync: peers, links, hubs, folders",
        "  Ctrl-L redraw   Ctrl-Z suspend   q quit   Ctrl-C quit at once",
        "Marks",
        "  *  the user's value        s  a system default      r  recommended by policy",
        "  P  mandatory by policy     L  locked by locks.d     +  a staged change",
        "  ~  stays on this machine   (blank)  a default",
        "",
        "Press any key to go back.",
    ]

    /// Draws the help over the body.
    package static func draw(layout: Layout, into frame: inout Frame) {
        for (offset, line) in lines.prefix(layout.bodyHeight).enumerated() {
            let style: CellStyle = line.first == " " || line.isEmpty ? .plain : .tone(.accent)
            frame.put(line, row: layout.bodyTop + offset, column: 1, width: layout.columns - 2, style: style)
        }
    }
}
