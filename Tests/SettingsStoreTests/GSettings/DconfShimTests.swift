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
        let loads = try Regex(#"CSETTINGS_LOAD\(\w+, (\w+), (\w+)\)"#)
        let pairs = shim.matches(of: loads).compactMap { match -> (String, String)? in
            // The macro's own definition names its parameters.
            guard let field = match.output[1].substring, let symbol = match.output[2].substring,
                field != "field"
            else { return nil }
            return (String(field), String(symbol))
        }
        #expect(pairs.count == 31)
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
        let checked = try compiles(
            pairs.map { field, symbol in
                "_Static_assert(__builtin_types_compatible_p(__typeof__(&\(symbol)), __typeof__(((CSettingsDconf *)0)->\(field))), \"\(field) is not \(symbol)\");"
            })
        #expect(checked.status == 0, "\(checked.error)")
        let gioLoads = try Regex(#"CSETTINGS_LOAD_GIO\(\w+, (\w+), (\w+)\)"#)
        let gioPairs = shim.matches(of: gioLoads).compactMap { match -> (String, String)? in
            guard let field = match.output[1].substring, let symbol = match.output[2].substring,
                field != "field"
            else { return nil }
            return (String(field), String(symbol))
        }
        #expect(gioPairs.count == 20)
        let gioChecked = try compiles(
            gioPairs.map { field, symbol in
                "_Static_assert(__builtin_types_compatible_p(__typeof__(&\(symbol)), __typeof__(((CSettingsGio *)0)->\(field))), \"\(field) is not \(symbol)\");"
            })
        #expect(gioChecked.status == 0, "\(gioChecked.error)")
        let wrong = try compiles([
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&dconf_client_read_full), int (*)(void)), \"x\");"
        ])
        #expect(wrong.status != 0, "the check cannot fail")
    }
}
