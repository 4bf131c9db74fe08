import SettingsDaemonClient
import SettingsGNOME
import SettingsStore

/// The selected key's details: its value and type, where the value comes from and what it
/// overrides, its scope and lock, the schema's summary, description, range, choices and default,
/// the dconf path of a GSettings key, and its history (who, when, from which machine). A folder
/// shows how many keys it holds.
package enum DetailPane {
    /// Draws the details of the selection of `state` into `frame`.
    package static func draw(
        _ state: BrowserState, tree: KeyTree, catalog: KeyCatalog, layout: Layout, into frame: inout Frame
    ) {
        let column = layout.detailColumn
        let width = layout.detailWidth
        guard width > 8 else { return }
        for row in layout.bodyTop..<(layout.bodyTop + layout.bodyHeight) {
            frame.put("│", row: row, column: column - 1, width: 1, style: .tone(.muted))
        }
        guard let path = state.selection, let node = tree.node(path) else { return }
        var lines: [(String, CellStyle)] = [(path, .tone(.accent))]
        if node.isKey, let entry = catalog.entry(path) {
            lines += keyLines(entry, state: state, width: width)
        } else {
            lines.append(("\(node.keyCount) \(node.keyCount == 1 ? "key" : "keys") under \(path).", .plain))
            lines.append(("→ opens it · d resets every key in it", .tone(.muted)))
        }
        let historyStart = lines.count
        var history: [(String, CellStyle)] = []
        if node.isKey, let detail = state.detail, detail.key == path {
            history = historyLines(detail, state: state)
        }
        let height = layout.bodyHeight
        let shown = max(height - min(history.count, max(height / 2, 3)), historyStart > 0 ? 1 : 0)
        var row = layout.bodyTop
        for (text, style) in lines.prefix(shown) {
            frame.put(text, row: row, column: column + 1, width: width - 1, style: style)
            row += 1
        }
        // The heading, then as many records as fit, from one that keeps the selected one in view.
        let room = layout.bodyTop + height - row - 1
        let skip = state.focus == .history ? max(0, state.historySelection - room + 1) : 0
        for (text, style) in history.prefix(1) + history.dropFirst(1 + skip)
        where row < layout.bodyTop + height {
            frame.put(text, row: row, column: column + 1, width: width - 1, style: style)
            row += 1
        }
    }

    /// The lines about a key.
    private static func keyLines(_ entry: KeyEntry, state: BrowserState, width: Int) -> [(String, CellStyle)]
    {
        let text = width - 12
        var lines: [(String, CellStyle)] = []
        func field(_ name: String, _ value: String, _ style: CellStyle = .plain) {
            let wrapped = TextWrap.lines(value, width: max(text, 8))
            for (index, line) in wrapped.prefix(4).enumerated() {
                lines.append(
                    (
                        (index == 0
                            ? name + String(repeating: " ", count: max(10 - name.count, 1)) : "          ")
                            + line, style
                    ))
            }
        }
        let description = state.detail?.key == entry.key ? state.detail?.description : nil
        field("value", entry.valueText, entry.origin == .user ? .bold : .plain)
        if let staged = state.stagedChange(of: entry.key) {
            field("staged", staged.value.map(KeyEntry.text) ?? "(reset to its default)", .tone(.staged))
        }
        let rule = description?.rule ?? entry.rule
        var type = rule?.type.rawValue ?? entry.typeName
        if let native = rule?.nativeType?.base { type += " (\(native.language) '\(native.text)')" }
        field("type", type)
        field("from", description.map { shortened($0.source) } ?? originPhrase(entry.origin))
        for layer in description?.overrides ?? [] {
            field(
                "over", "\(shortened(layer.source)): \(layer.value.map(KeyEntry.text) ?? "nothing")",
                .tone(.muted))
        }
        field("scope", entry.isLocal ? "local: stays on this machine" : "synced")
        if let locker = description?.lockedBy { field("locked", locker, .tone(.locked)) }
        if let problem = description?.schemaProblem { field("problem", problem, .tone(.error)) }
        if let rule {
            if let minimum = rule.minimum, let maximum = rule.maximum {
                field("range", "\(number(minimum)) … \(number(maximum))")
            } else if let minimum = rule.minimum {
                field("range", "at least \(number(minimum))")
            } else if let maximum = rule.maximum {
                field("range", "at most \(number(maximum))")
            }
            if let choices = rule.choices { field("choices", choices.joined(separator: ", ")) }
            if let longest = rule.maximumLength { field("longest", "\(longest)") }
            if let value = rule.defaultValue { field("default", KeyEntry.text(value), .tone(.muted)) }
            if rule.gvariantType != nil, let path = try? DconfPath.path(forKey: entry.key) {
                field("dconf", path, .tone(.muted))
            }
            if let summary = rule.summary { field("summary", summary) }
            if let more = rule.description, more != rule.summary {
                for line in TextWrap.lines(more, width: max(width - 2, 8)).prefix(6) {
                    lines.append((line, .tone(.muted)))
                }
            }
        }
        if let problem = state.detail?.error, state.detail?.key == entry.key {
            lines.append((problem, .tone(.error)))
        }
        return lines
    }

    /// The history's heading and records; the selected one marked when the history has focus.
    private static func historyLines(_ detail: BrowserState.Detail, state: BrowserState) -> [(
        String, CellStyle
    )] {
        let focused = state.focus == .history
        var lines: [(String, CellStyle)] = [
            (
                focused ? "History (Enter reverts, Tab back)" : "History (Tab to choose one to revert to)",
                .tone(.accent)
            )
        ]
        if detail.history.isEmpty { lines.append(("no changes recorded", .tone(.muted))) }
        for (index, record) in detail.history.enumerated() {
            // Month, day and time of day in UTC, as the history command prints them.
            let time = ISO8601.format(secondsSince1970: Double(record.timeMilliseconds / 1000))
                .dropFirst(5).prefix(14).replacing("T", with: " ")
            let value = record.isRedacted ? "(secret)" : record.value.map(KeyEntry.text) ?? "deleted"
            let machine = record.originName ?? String(record.origin.description.prefix(8))
            let who = record.actor?.executable.map { " · \($0.split(separator: "/").last ?? "")" } ?? ""
            let style: CellStyle = focused && index == state.historySelection ? .reversed : .plain
            lines.append(("\(time) \(record.reason) \(value) · \(machine)\(who)", style))
        }
        return lines
    }

    /// A source phrase with each file named by its last component (`describe` gives the path).
    private static func shortened(_ source: String) -> String {
        source.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.hasPrefix("/") && word.count > 1
                ? word.split(separator: "/").last.map(String.init) ?? String(word) : String(word)
        }.joined(separator: " ")
    }

    private static func originPhrase(_ origin: ValueOrigin) -> String {
        switch origin {
        case .user: "the user's value"
        case .schemaDefault: "a default"
        case .systemDefault: "a system default"
        case .recommendedPolicy: "recommended by the hub's policy"
        case .mandatoryPolicy: "mandatory by the hub's policy"
        case .locked: "a lock"
        case .unset: "unset"
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
