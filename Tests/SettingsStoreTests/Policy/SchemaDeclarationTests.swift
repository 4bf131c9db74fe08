import Foundation
import SettingsStore
import Testing

@testable import SettingsDaemonClient
@testable import SettingsDaemonKit
@testable import SettingsGNOME
@testable import SettingsSync
@testable import SettingsWire

@Suite("schema check refuses typos and impossible rules, naming the file, key and field")
struct SchemaDeclarationTests {
    static let cases: [(rule: String, message: String)] = [
        (#""a.b": {"type": "string", "secrte": true}"#, "unknown field 'secrte'"),
        (#""a.b": {"type": "int", "min": 5, "max": 1}"#, "'min' (5.0) is above 'max' (1.0)"),
        (#""a.b": {"type": "string", "choices": []}"#, "'choices' is empty"),
        (#""a.b": {"type": "string", "maxLength": -1}"#, "'maxLength' is negative"),
        (#""a.b": {"type": "int", "choices": ["x"]}"#, "'choices' lists strings"),
        (#""a.b": {"type": "bool", "min": 0}"#, "'min' and 'max' bound numbers"),
        (#""a.b": {"type": "bool", "maxLength": 3}"#, "'maxLength' bounds strings"),
        (#""*": {"type": "any"}"#, "'*' alone"),
        (#""x.": {"type": "any"}"#, "ending in '.'"),
        (#""a.b*": {"type": "any"}"#, "whole names only"),
    ]

    @Test("Each impossible rule is refused; the same file with it fixed loads")
    func impossibleRulesAreRefused() throws {
        let directory = TemporaryDirectory()
        for (index, (rule, message)) in Self.cases.enumerated() {
            let file = directory.file("case\(index).json")
            try #"{"format": "settingsd-schema", "version": 1, "keys": {\#(rule)}}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            let error = #expect(throws: SettingsError.self) { try SettingsSchema.rules(inFile: file) }
            #expect(error?.message.contains(message) == true, "\(rule): \(error?.message ?? "")")
            #expect(error?.message.contains(file) == true)
            let checked = DaemonProcess.run(["schema", "check", file])
            #expect(checked.status != 0 && checked.error.contains(message), "\(checked.error)")
        }
        let unknownTop = directory.file("top.json")
        try #"{"format": "settingsd-schema", "version": 1, "keys": {}, "kyes": {}}"#
            .write(toFile: unknownTop, atomically: true, encoding: .utf8)
        #expect(throws: SettingsError.self) { try SettingsSchema.rules(inFile: unknownTop) }
        let fine = directory.file("fine.json")
        try
            #"{"format": "settingsd-schema", "version": 1, "keys": {"a.*.b": {"type": "int", "min": 1, "max": 5}, "a.c": {"type": "array", "choices": ["x"]}}}"#
            .write(toFile: fine, atomically: true, encoding: .utf8)
        #expect(try SettingsSchema.rules(inFile: fine).count == 2)
    }
}
