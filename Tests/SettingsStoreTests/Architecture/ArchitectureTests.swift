import Foundation
import Testing

/// The layers of `Sources/SettingsStore`, checked rather than reviewed: docs/ARCHITECTURE.md's
/// table lists the folders from the bottom layer up, and no file may name a type declared in a
/// folder listed below its own (folders in one row are one layer).
@Suite("Architecture: layers point one way")
struct ArchitectureTests {
    /// The repository's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folders of the layer table, each with its rank (row number).
    static func layers() throws -> [String: Int] {
        let text = try String(
            contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        var ranks: [String: Int] = [:]
        var row = 0
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            let folders = firstCell.split(separator: "`").filter { $0.hasSuffix("/") }
            guard !folders.isEmpty else { continue }
            for folder in folders { ranks[String(folder.dropLast())] = row }
            row += 1
        }
        return ranks
    }

    /// The Swift files of each folder of the library, by folder.
    static func sources() throws -> [String: [(path: String, text: String)]] {
        let library = root.appendingPathComponent("Sources/SettingsStore")
        var files: [String: [(String, String)]] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: library.path) {
            let folderURL = library.appendingPathComponent(folder)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folderURL.path) else {
                continue
            }
            for name in names.sorted() where name.hasSuffix(".swift") {
                let text = try String(contentsOf: folderURL.appendingPathComponent(name), encoding: .utf8)
                files[folder, default: []].append(("\(folder)/\(name)", text))
            }
        }
        return files
    }

    /// The types a file declares at its top level (nested types are named through their parent).
    static func declaredTypes(in text: String) -> [String] {
        let keywords: Set<Substring> = ["class", "struct", "enum", "protocol", "actor", "typealias"]
        let modifiers: Set<Substring> = [
            "public", "package", "internal", "private", "fileprivate", "final", "indirect", "nonisolated",
        ]
        var names: [String] = []
        for line in text.split(separator: "\n") where !line.hasPrefix(" ") && !line.hasPrefix("\t") {
            var words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "<" || $0 == "{" })[...]
            while let first = words.first, modifiers.contains(first) || first.hasPrefix("@") {
                words = words.dropFirst()
            }
            guard let keyword = words.first, keywords.contains(keyword), let name = words.dropFirst().first
            else { continue }
            names.append(String(name))
        }
        return names
    }

    /// The identifiers a file uses outside comments and string literals.
    static func identifiers(in text: String) -> Set<String> {
        var code = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var inString = false
            var previous: Character = " "
            for character in line {
                if !inString, character == "/", previous == "/" {
                    code.removeLast()
                    break
                }
                if character == "\"" && previous != "\\" { inString.toggle() }
                code.append(inString ? " " : character)
                previous = character
            }
            code.append("\n")
        }
        var words: Set<String> = []
        var current = ""
        for character in code {
            if character.isLetter || character.isNumber || character == "_" {
                current.append(character)
            } else if !current.isEmpty {
                words.insert(current)
                current = ""
            }
        }
        return words
    }

    @Test("every folder of Sources/SettingsStore is in docs/ARCHITECTURE.md's layer table")
    func everyFolderIsALayer() throws {
        let ranks = try Self.layers()
        for folder in try Self.sources().keys.sorted() {
            #expect(ranks[folder] != nil, "\(folder)/ is missing from docs/ARCHITECTURE.md's layer table")
        }
    }

    @Test("no folder names a type declared in a layer above it")
    func layersPointOneWay() throws {
        let ranks = try Self.layers()
        let sources = try Self.sources()
        var owner: [String: (folder: String, rank: Int)] = [:]
        for (folder, files) in sources {
            guard let rank = ranks[folder] else { continue }
            for file in files {
                for name in Self.declaredTypes(in: file.text) { owner[name] = (folder, rank) }
            }
        }
        #expect(owner["Settings"]?.folder == "Store", "the declaration scan found no Settings in Store/")
        var violations: [String] = []
        for (folder, files) in sources {
            guard let rank = ranks[folder] else { continue }
            for file in files {
                for name in Self.identifiers(in: file.text).sorted() {
                    guard let declared = owner[name], declared.rank > rank else { continue }
                    violations.append("\(file.path) names \(name) from \(declared.folder)/")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations.sorted().joined(separator: "\n"))")
    }

    @Test("the scan sees declarations and uses, not comments or strings")
    func scannerReadsCode() {
        let text = """
            public final class Alpha: Sendable {
                let beta: Beta  // Gamma in a comment
                func f() { print("Delta in a string") }
            }
            package struct Epsilon {}
            extension Zeta {}
            """
        #expect(Self.declaredTypes(in: text) == ["Alpha", "Epsilon"])
        let used = Self.identifiers(in: text)
        #expect(used.contains("Beta"))
        #expect(!used.contains("Gamma"))
        #expect(!used.contains("Delta"))
    }
}
