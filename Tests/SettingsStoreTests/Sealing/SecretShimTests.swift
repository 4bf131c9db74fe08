import Foundation
import Testing

/// `CSecret/shim.h` declares libsecret's schema and the functions it loads itself (the static
/// `settingsd` must build without GLib's headers); this compiles it beside the real headers and
/// asserts the schema's layout and each function pointer's type.
@Suite(
    "libsecret shim: the schema's layout and every declaration match libsecret's and GLib's headers",
    .enabled(
        if: FileManager.default.fileExists(atPath: "/usr/include/libsecret-1/libsecret/secret.h")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/pkg-config"),
        "needs libsecret-1-dev and pkg-config")
)
struct SecretShimTests {
    static let shim = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Sources/CSecret/shim.h"
        ).path

    @Test(
        "the schema is laid out as SecretSchema, each loaded symbol has its field's type, and a wrong one is caught"
    )
    func declarationsMatchHeaders() throws {
        let compiler = try #require(DconfShimTests.compiler, "no C compiler")
        let shim = try String(contentsOfFile: Self.shim, encoding: .utf8)
        let loads = try Regex(#"CSETTINGS_LOAD\(\w+, (\w+), (\w+)\)"#)
        let pairs = shim.matches(of: loads).compactMap { match -> (String, String)? in
            guard let field = match.output[1].substring, let symbol = match.output[2].substring,
                field != "field"
            else { return nil }
            return (String(field), String(symbol))
        }
        #expect(pairs.count == 10)
        let directory = TemporaryDirectory()
        func compiles(_ assertions: [String]) throws -> CLIResult {
            let file = directory.file("check-\(assertions.count).c")
            try
                (["#include <libsecret/secret.h>", "#include <stddef.h>", "#include \"\(Self.shim)\""]
                + assertions)
                .joined(separator: "\n").appending("\n").write(
                    toFile: file, atomically: true, encoding: .utf8)
            let flags = DaemonProcess.run(["--cflags", "libsecret-1"], through: "/usr/bin/pkg-config").output
                .split(whereSeparator: \.isWhitespace).map(String.init)
            return DaemonProcess.run(
                ["-fsyntax-only", "-Wno-nullability-completeness"] + flags + [file], through: compiler)
        }
        func same(_ ours: String, _ theirs: String) -> String {
            "_Static_assert(\(ours) == \(theirs), \"\(ours) is not \(theirs)\");"
        }
        var assertions = [
            same("sizeof(CSettingsSecretSchema)", "sizeof(SecretSchema)"),
            same("sizeof(CSettingsSecretAttribute)", "sizeof(SecretSchemaAttribute)"),
            same("offsetof(CSettingsSecretAttribute, type)", "offsetof(SecretSchemaAttribute, type)"),
        ]
        for field in ["name", "flags", "attributes", "reserved", "reserved1", "reserved7"] {
            assertions.append(
                same("offsetof(CSettingsSecretSchema, \(field))", "offsetof(SecretSchema, \(field))"))
        }
        // The three that take the schema take ours, not SecretSchema: their return types are
        // checked, the rest whole.
        let takesSchema = ["storev_sync", "lookupv_sync", "clearv_sync"]
        for (field, symbol) in pairs {
            if takesSchema.contains(field) {
                assertions.append(
                    "_Static_assert(__builtin_types_compatible_p(__typeof__(\(symbol)(0, 0, 0, 0\(field == "storev_sync" ? ", 0, 0, 0" : ""))), __typeof__(((CSettingsSecret *)0)->\(field)(0, 0, 0, 0\(field == "storev_sync" ? ", 0, 0, 0" : "")))), \"\(field) returns another type than \(symbol)\");"
                )
            } else {
                assertions.append(
                    "_Static_assert(__builtin_types_compatible_p(__typeof__(&\(symbol)), __typeof__(((CSettingsSecret *)0)->\(field))), \"\(field) is not \(symbol)\");"
                )
            }
        }
        let checked = try compiles(assertions)
        #expect(checked.status == 0, "\(checked.error)")
        let wrong = try compiles([same("sizeof(CSettingsSecretSchema)", "sizeof(SecretSchemaAttribute)")])
        #expect(wrong.status != 0, "the check cannot fail")
    }
}
