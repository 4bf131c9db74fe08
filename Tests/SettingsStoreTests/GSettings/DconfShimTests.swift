import Foundation
import Testing

/// `CDconf/shim.h` declares libdconf's and GLib's functions itself (the static `settingsd` must
/// build without GLib's headers); this compiles it beside the real headers and asserts that each
/// function pointer has the type of the symbol it is loaded from.
@Suite(
    "dconf shim: every declaration matches libdconf's and GLib's headers",
    .enabled(
        if: FileManager.default.fileExists(atPath: "/usr/include/dconf/dconf.h")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/pkg-config"),
        "needs libdconf-dev and pkg-config")
)
struct DconfShimTests {
    static let shim = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Sources/CDconf/shim.h"
        ).path

    /// A C compiler: the toolchain's clang beside `swift`, else the system's.
    static var compiler: String? {
        let candidates =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/clang" }
            + ["/usr/bin/clang", "/usr/bin/cc"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("each loaded symbol's type is the field's type, and a wrong one is caught")
    func declarationsMatchHeaders() throws {
        let compiler = try #require(Self.compiler, "no C compiler")
        let shim = try String(contentsOfFile: Self.shim, encoding: .utf8)
        /// One assertion per `MACRO(library, field, symbol)` of the shim: the symbol's type is the
        /// field's in `table` (the macro's own definition, which names its parameters, aside).
        func assertions(_ macro: String, table: String) throws -> [String] {
            try shim.matches(of: Regex(macro + #"\(\w+, (\w+), (\w+)\)"#)).compactMap { match in
                guard let field = match.output[1].substring, let symbol = match.output[2].substring,
                    field != "field"
                else { return nil }
                return
                    "_Static_assert(__builtin_types_compatible_p(__typeof__(&\(symbol)), __typeof__(((\(table) *)0)->\(field))), \"\(field) is not \(symbol)\");"
            }
        }
        let dconf = try assertions("CSETTINGS_LOAD", table: "CSettingsDconf")
        let gio = try assertions("CSETTINGS_LOAD_GIO", table: "CSettingsGio")
        #expect(dconf.count == 31)
        #expect(gio.count == 20)
        let directory = TemporaryDirectory()
        func compiles(_ assertions: [String]) throws -> CLIResult {
            let file = directory.file("check-\(assertions.count).c")
            try (["#include <dconf.h>", "#include \"\(Self.shim)\""] + assertions).joined(separator: "\n")
                .appending("\n").write(toFile: file, atomically: true, encoding: .utf8)
            let flags = DaemonProcess.run(["--cflags", "dconf"], through: "/usr/bin/pkg-config").output
                .split(whereSeparator: \.isWhitespace).map(String.init)
            return DaemonProcess.run(
                ["-fsyntax-only", "-Wno-nullability-completeness"] + flags + [file], through: compiler)
        }
        let checked = try compiles(dconf)
        #expect(checked.status == 0, "\(checked.error)")
        let gioChecked = try compiles(gio)
        #expect(gioChecked.status == 0, "\(gioChecked.error)")
        let wrong = try compiles([
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&dconf_client_read_full), int (*)(void)), \"x\");"
        ])
        #expect(wrong.status != 0, "the check cannot fail")
    }
}
