import Foundation
import Testing

/// The libraries and their layers, checked rather than reviewed: docs/ARCHITECTURE.md's layer
/// table lists each library's folders from the bottom layer up, and no file may name a type
/// declared in a folder of its library listed below its own (folders in one row are one layer);
/// no file may import a library of this package that its own does not depend on in
/// `Package.swift` (the compiler keeps the libraries apart only along the dependencies a target
/// declares).
@Suite("Architecture: libraries and layers point one way")
struct ArchitectureTests {
    /// The repository's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folders of the layer table, as `Library/Folder`, each with its rank (row number).
    static func layers() throws -> [String: Int] {
        let text = try String(
            contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        var ranks: [String: Int] = [:]
        var row = 0
        for line in text.split(separator: "\n") where line.hasPrefix("| `Settings") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: true)
            guard cells.count >= 3 else { continue }
            let library = cells[0].split(separator: "`").first { !$0.allSatisfy(\.isWhitespace) } ?? ""
            let folders = cells[1].split(separator: "`").filter { $0.hasSuffix("/") }
            guard !folders.isEmpty else { continue }
            for folder in folders { ranks["\(library)/\(folder.dropLast())"] = row }
            row += 1
        }
        return ranks
    }

    /// The library targets of `Package.swift` and the libraries of this package each depends on.
    static func dependencies() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var result: [String: Set<String>] = [:]
        let blocks = manifest.components(separatedBy: ".target(").dropFirst()
        for block in blocks {
            guard let nameRange = block.range(of: #"name: "(\w+)""#, options: .regularExpression) else {
                continue
            }
            let name = block[nameRange].split(separator: "\"")[1]
            guard let start = block.range(of: "dependencies: ["),
                let end = block[start.upperBound...].range(of: "]")
            else { continue }
            let list = String(block[start.upperBound..<end.lowerBound])
            result[String(name)] = Set(list.matches(of: /"(\w+)"/).map { String($0.output.1) })
        }
        return result
    }

    /// The Swift files of each library's folders, by `Library/Folder`.
    static func sources() throws -> [String: [(path: String, text: String)]] {
        var files: [String: [(String, String)]] = [:]
        for library in try dependencies().keys where library.hasPrefix("Settings") {
            let libraryURL = root.appendingPathComponent("Sources/\(library)")
            guard let folders = try? FileManager.default.contentsOfDirectory(atPath: libraryURL.path) else {
                continue
            }
            for folder in folders {
                let folderURL = libraryURL.appendingPathComponent(folder)
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: folderURL.path) else {
                    continue
                }
                for name in names.sorted() where name.hasSuffix(".swift") {
                    let text = try String(contentsOf: folderURL.appendingPathComponent(name), encoding: .utf8)
                    files["\(library)/\(folder)", default: []].append(("\(library)/\(folder)/\(name)", text))
                }
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

    /// The libraries that lay their folders out in layers (the command line and the facades
    /// are flat).
    static let layeredLibraries: Set<String> = [
        "SettingsStore", "SettingsGNOME", "SettingsWire", "SettingsSync", "SettingsDaemonClient",
        "SettingsDaemonKit", "SettingsBrowser",
    ]

    @Test("every folder of every library is in docs/ARCHITECTURE.md's layer table")
    func everyFolderIsALayer() throws {
        let ranks = try Self.layers()
        let folders = try Self.sources().keys.filter {
            Self.layeredLibraries.contains(String($0.split(separator: "/")[0]))
        }
        #expect(folders.count > 20)
        for folder in folders.sorted() {
            #expect(ranks[folder] != nil, "\(folder)/ is missing from docs/ARCHITECTURE.md's layer table")
        }
    }

    @Test("no folder names a type declared in a layer of its library above it")
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
        #expect(
            owner["Settings"]?.folder == "SettingsStore/Store",
            "the declaration scan found no Settings in Store/")
        var violations: [String] = []
        for (folder, files) in sources {
            guard let rank = ranks[folder] else { continue }
            let library = folder.split(separator: "/")[0]
            for file in files {
                for name in Self.identifiers(in: file.text).sorted() {
                    guard let declared = owner[name], declared.rank > rank,
                        declared.folder.split(separator: "/")[0] == library
                    else { continue }
                    violations.append("\(file.path) names \(name) from \(declared.folder)/")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations.sorted().joined(separator: "\n"))")
    }

    @Test(
        "no file imports a library of this package that its own does not depend on; the store depends on none"
    )
    func importsFollowDependencies() throws {
        let dependencies = try Self.dependencies()
        let libraries = Set(dependencies.keys.filter { $0.hasPrefix("Settings") })
        #expect(dependencies["SettingsStore"].map { $0.isDisjoint(with: libraries) } == true)
        #expect(dependencies["SettingsGNOME"] == ["SettingsStore", "CDconf"])
        var violations: [String] = []
        for (folder, files) in try Self.sources() {
            let library = String(folder.split(separator: "/")[0])
            let allowed = (dependencies[library] ?? []).union([library])
            for file in files {
                for line in file.text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count else {
                        continue
                    }
                    let module = String(words[index + 1])
                    if libraries.contains(module) || module.hasPrefix("C"), !allowed.contains(module),
                        dependencies[module] != nil || module.hasPrefix("C")
                    {
                        if module.hasPrefix("C"), !["CSQLite", "CLibPQ", "CDconf", "CLinux"].contains(module)
                        {
                            continue
                        }
                        violations.append("\(file.path) imports \(module)")
                    }
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
