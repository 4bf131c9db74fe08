import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsStore
import SettingsSync
import SettingsWire

/// `settingsd describe KEY`: everything known about a key, for people or as JSON.
enum DescribeCommand {
    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let key = try arguments.key(try arguments.positionals(1...1)[0])
        let description = try arguments.service(forWriting: false).describe(key)
        if arguments.isSet(Options.json) {
            Output.line(JSONValue.object(description.fields).serialized())
            return 0
        }
        Output.line("key: \(key)")
        if let rule = description.rule {
            let declared = rule.key == description.key ? "" : " (by pattern \(rule.key))"
            let gvariant = rule.gvariantType.map { " (GVariant '\($0)')" } ?? ""
            Output.line("type: \(rule.type.rawValue)\(gvariant)\(declared)")
            if let value = rule.defaultValue { Output.line("default: \(Output.listed(value))") }
            if rule.minimum != nil || rule.maximum != nil {
                Output.line(
                    "range: \(rule.minimum.map(Output.number) ?? "-∞") to \(rule.maximum.map(Output.number) ?? "+∞")"
                )
            }
            if let choices = rule.choices { Output.line("choices: \(choices.joined(separator: ", "))") }
            if let length = rule.maximumLength { Output.line("maximum length: \(length)") }
            if let summary = rule.summary { Output.line("summary: \(summary)") }
            if let description = rule.description { Output.line("description: \(description)") }
            if rule.isSecret { Output.line("secret: yes (the history keeps fingerprints, not values)") }
            Output.line("schema: \(rule.file)")
        } else {
            Output.line("type: any (no schema declares this key)")
        }
        let scope = description.scope
        let scopeRule = description.scopeRule.map { " (by \($0.key) in \($0.file))" } ?? ""
        Output.line("scope: \(scope.rawValue)\(scope == .local ? " (never synced)" : "")\(scopeRule)")
        if let system = description.systemDefault {
            Output.line("system default: \(Output.listed(system.value)) (\(system.file))")
        }
        if let file = description.lockedBy {
            Output.line("writable: no")
            Output.line("locked by: \(file)")
        } else {
            Output.line("writable: yes")
        }
        Output.line("value: \(description.value.map(Output.listed) ?? "unset")")
        Output.line("from: \(description.source)")
        for layer in description.overrides {
            Output.line("overrides: \(layer.source): \(layer.value.map(Output.listed) ?? "unset")")
        }
        if let problem = description.schemaProblem {
            Output.line("warning: the schema changed since: \(problem)")
        }
        return 0
    }

}
