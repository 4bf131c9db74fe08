/// Keys as a tree by their dotted path: `org.gnome.desktop.interface.color-scheme` is the leaf
/// `color-scheme` under the folders `org`, `gnome`, `desktop`, `interface`; a key may be a folder
/// too (`a` and `a.b` both set). The tree is only a sorted array of the keys: the keys under a
/// folder are one contiguous range of it, found by binary search, so a folder's children and
/// their counts cost a search per child, whatever the number of keys, and nothing is built for
/// folders no one opens.
package struct KeyTree: Sendable {
    /// A key, a folder, or both.
    package struct Node: Equatable, Sendable {
        /// The last segment.
        package let name: String
        /// The whole path (the key, when `isKey`).
        package let path: String
        /// Whether a key has exactly this path.
        package let isKey: Bool
        /// The keys at or under this path.
        package let keyCount: Int

        /// Whether it holds other keys.
        package var isFolder: Bool { keyCount > (isKey ? 1 : 0) }
    }

    /// A row of the tree as drawn: a path at a depth.
    package struct Row: Equatable, Sendable {
        /// The path.
        package let path: String
        /// How many folders it is under.
        package let depth: Int
    }

    /// The keys, sorted (by their UTF-8 bytes, which is `String`'s order for NFC keys), unique.
    package private(set) var keys: [String]

    /// A tree of `keys` (in any order, repeats ignored).
    package init(keys: some Sequence<String> = []) {
        var sorted = Array(keys)
        if !zip(sorted, sorted.dropFirst()).allSatisfy({ $0 < $1 }) {
            sorted.sort()
            var unique: [String] = []
            unique.reserveCapacity(sorted.count)
            for key in sorted where unique.last != key { unique.append(key) }
            sorted = unique
        }
        self.keys = sorted
    }

    /// The number of keys.
    package var count: Int { keys.count }

    /// Whether `key` is a key of the tree.
    package func contains(_ key: String) -> Bool {
        let index = lowerBound(key)
        return index < keys.count && keys[index] == key
    }

    /// Adds `key`; nothing when it is there. Returns where it went, if it was new.
    @discardableResult
    package mutating func insert(_ key: String) -> Int? {
        let index = lowerBound(key)
        if index < keys.count, keys[index] == key { return nil }
        keys.insert(key, at: index)
        return index
    }

    /// Removes `key`. Returns where it was, if it was there.
    @discardableResult
    package mutating func remove(_ key: String) -> Int? {
        let index = lowerBound(key)
        guard index < keys.count, keys[index] == key else { return nil }
        keys.remove(at: index)
        return index
    }

    /// The node of `path`, a key or a folder, or nil when neither.
    package func node(_ path: String) -> Node? {
        let isKey = contains(path)
        let under = range(under: path + ".").count
        guard isKey || under > 0 else { return nil }
        let name = path.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? path
        return Node(name: name, path: path, isKey: isKey, keyCount: under + (isKey ? 1 : 0))
    }

    /// The children of the folder `path` (the top level when nil), sorted by name.
    package func children(of path: String?) -> [Node] {
        let prefix = path.map { $0 + "." } ?? ""
        let bounds = path == nil ? 0..<keys.count : range(under: prefix)
        let offset = prefix.utf8.count
        var found: [String: (isKey: Bool, under: Int)] = [:]
        var index = bounds.lowerBound
        while index < bounds.upperBound {
            let rest = keys[index].utf8.dropFirst(offset)
            if let dot = rest.firstIndex(of: UInt8(ascii: ".")) {
                let name = String(Substring(rest[..<dot]))
                let end = range(under: prefix + name + ".").upperBound
                found[name, default: (false, 0)].under += end - index
                index = end
            } else {
                found[String(Substring(rest)), default: (false, 0)].isKey = true
                index += 1
            }
        }
        return found.keys.sorted().map { name in
            let (isKey, under) = found[name] ?? (false, 0)
            return Node(name: name, path: prefix + name, isKey: isKey, keyCount: under + (isKey ? 1 : 0))
        }
    }

    /// The rows to draw: the children of every expanded folder, depth first; with `expandingAll`,
    /// every folder is open (a search's results).
    package func rows(expanded: Set<String>, expandingAll: Bool = false) -> [Row] {
        var rows: [Row] = []
        func visit(_ path: String?, depth: Int) {
            for child in children(of: path) {
                rows.append(Row(path: child.path, depth: depth))
                if child.isFolder, expandingAll || expanded.contains(child.path) {
                    visit(child.path, depth: depth + 1)
                }
            }
        }
        visit(nil, depth: 0)
        return rows
    }

    /// The paths of the folders above `path`, outermost first.
    package func ancestors(of path: String) -> [String] {
        let segments = path.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count > 1 else { return [] }
        return (1..<segments.count).map { segments[..<$0].joined(separator: ".") }
    }

    /// The folder directly above `path`, or nil at the top.
    package func parent(of path: String) -> String? {
        ancestors(of: path).last
    }

    /// The positions of the keys that start with `prefix` (which ends in `.`): one range, as
    /// the keys are sorted.
    private func range(under prefix: String) -> Range<Int> {
        // The first string after every one that starts with `prefix`: its last byte, `.`, made `/`.
        let end = String(prefix.dropLast()) + "/"
        return lowerBound(prefix)..<lowerBound(end)
    }

    /// The first position whose key is not below `probe`.
    private func lowerBound(_ probe: String) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < probe { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
