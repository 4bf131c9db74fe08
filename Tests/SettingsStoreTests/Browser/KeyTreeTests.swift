import Testing

@testable import SettingsBrowser

@Suite("Browser: keys as a tree by path")
struct KeyTreeTests {
    @Test("rows, counts and folders follow the keys through random inserts and removals")
    func followsAModel() {
        var tree = KeyTree()
        var model: Set<String> = []
        let names = ["a", "b", "a-b", "ab", "c"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let depth = Int.random(in: 1...4, using: &generator)
            let key = (0..<depth).map { _ in names.randomElement(using: &generator) ?? "a" }.joined(
                separator: ".")
            if Bool.random(using: &generator) {
                tree.insert(key)
                model.insert(key)
            } else {
                tree.remove(key)
                model.remove(key)
            }
            #expect(tree.count == model.count)
        }
        // Everything open: every key and every folder above one, once, each folder before what it holds.
        let rows = tree.rows(expanded: [], expandingAll: true)
        var expectedPaths: Set<String> = []
        for key in model {
            let segments = key.split(separator: ".", omittingEmptySubsequences: false)
            for end in 1...segments.count { expectedPaths.insert(segments[..<end].joined(separator: ".")) }
        }
        #expect(Set(rows.map(\.path)) == expectedPaths)
        #expect(rows.count == expectedPaths.count)
        for key in model { #expect(tree.contains(key)) }
        for path in expectedPaths {
            let node = tree.node(path)
            #expect(
                node?.keyCount == model.filter { $0 == path || $0.hasPrefix(path + ".") }.count, "\(path)")
            let children = tree.children(of: path).map(\.name)
            #expect(children == children.sorted())
            #expect(Set(children).count == children.count, "each child once: \(children)")
        }
    }

    @Test("only open folders show what they hold; a key that is a folder too is both")
    func openFolders() {
        var tree = KeyTree(keys: [
            "ui.theme", "ui.font.size", "ui", "audio.volume", "ui-old.x", "ui.font.size",
        ])
        // `ui-old.x` sorts between `ui` and `ui.font.size`: the folder `ui` is still one row.
        #expect(tree.rows(expanded: []).map(\.path) == ["audio", "ui", "ui-old"])
        #expect(tree.rows(expanded: ["ui"]).map(\.path) == ["audio", "ui", "ui.font", "ui.theme", "ui-old"])
        #expect(tree.rows(expanded: ["ui", "ui.font"]).map(\.depth) == [0, 0, 1, 2, 1, 0])
        #expect(tree.node("ui")?.isKey == true && tree.node("ui")?.isFolder == true)
        #expect(tree.ancestors(of: "ui.font.size") == ["ui", "ui.font"])
        tree.remove("ui.font.size")
        #expect(tree.node("ui.font") == nil)
        #expect(tree.node("ui")?.keyCount == 2)
        #expect(tree.count == 4)
    }
}
