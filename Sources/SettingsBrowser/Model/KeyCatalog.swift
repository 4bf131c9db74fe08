package import SettingsDaemonClient
package import SettingsStore

#if canImport(Glibc)
    import Glibc
#endif

/// Every key the browser shows: those holding a value and those a schema declares, in a tree by
/// path. Opening it needs only the keys' names and the schemas: a key's value and where it comes
/// from are read (`describe`) when its row is first drawn, and every value is taken in parts in
/// the background (`getMany`), for the search. A change replaces the entries of its keys.
package struct KeyCatalog {
    /// The keys, as a tree.
    package private(set) var tree = KeyTree()
    /// The schemas in force.
    package private(set) var schema = SettingsSchema()
    /// The keys the schemas declare, with their values and sources as `schema` answered.
    private var declared: [String: SchemaEntry] = [:]
    /// The keys read with `describe`: what they hold and where it comes from, exactly.
    private var described: [String: KeyEntry] = [:]
    /// The values taken so far, for the search.
    private var values: [String: SettingValue] = [:]
    /// How many keys (in the tree's order) have had their values asked for.
    package private(set) var valuesAsked = 0
    /// Each key's name, summary and value in lower case, as the search reads them (built on the
    /// first search, kept as keys change).
    private var searchText: [String: String]?

    /// An empty catalog.
    package init() {}

    /// The catalog of the stored `keys` and a `schema` answer.
    package init(keys: [String], schemaEntries: [SchemaEntry]) {
        var rules: [SchemaRule] = []
        for entry in schemaEntries {
            rules.append(entry.rule)
            if !entry.rule.isPattern, !entry.rule.isScopeOnly { declared[entry.rule.key] = entry }
        }
        schema = (try? SettingsSchema(rules: rules)) ?? SettingsSchema()
        tree = KeyTree(keys: keys + declared.keys)
    }

    /// The number of keys.
    package var count: Int { tree.count }

    /// Whether values are still being taken for the search.
    package var isTakingValues: Bool { valuesAsked < tree.count }

    /// The entry of `key`: as `describe` said, else as the schema and the values taken say.
    package func entry(_ key: String) -> KeyEntry? {
        if let entry = described[key] { return entry }
        guard tree.contains(key) else { return nil }
        if let entry = declared[key] {
            return KeyEntry(
                key: key, value: entry.value, origin: ValueOrigin(source: entry.source),
                isLocal: schema.scope(forKey: key) == .local, rule: entry.rule)
        }
        return KeyEntry(
            key: key, value: values[key], origin: values[key] == nil ? .unset : .user,
            isLocal: schema.scope(forKey: key) == .local, rule: schema.rule(forKey: key))
    }

    /// Whether `key` has been read with `describe` since it last changed.
    package func isDescribed(_ key: String) -> Bool {
        described[key] != nil
    }

    /// Takes what `description` says of its key; a key with no value and no rule of its own leaves.
    package mutating func update(_ description: KeyDescription) {
        let key = description.key
        guard description.value != nil || description.rule.map({ !$0.isPattern }) == true else {
            remove(key)
            return
        }
        let entry = KeyEntry(
            key: key, value: description.value, origin: ValueOrigin(source: description.source),
            isLocal: description.scope == .local, rule: description.rule)
        described[key] = entry
        values[key] = description.value
        // The keys after a new one move one place on: those asked for already stay counted.
        if let index = tree.insert(key), index < valuesAsked { valuesAsked += 1 }
        searchText?[key] = Self.searchText(of: entry)
    }

    /// Removes `key`.
    package mutating func remove(_ key: String) {
        described[key] = nil
        values[key] = nil
        searchText?[key] = nil
        if let index = tree.remove(key), index < valuesAsked { valuesAsked -= 1 }
    }

    /// The next `limit` keys whose values have not been asked for, counted as asked.
    package mutating func nextKeysToTake(limit: Int) -> [String] {
        let end = min(valuesAsked + limit, tree.count)
        defer { valuesAsked = end }
        return Array(tree.keys[valuesAsked..<end])
    }

    /// Takes the values `getMany` answered for some keys.
    package mutating func take(_ taken: [String: SettingValue]) {
        for (key, value) in taken where described[key] == nil {
            values[key] = value
            if searchText != nil, let entry = entry(key) { searchText?[key] = Self.searchText(of: entry) }
        }
    }

    /// The keys whose name, summary or value contains `query` (any case), sorted: among
    /// `candidates` only, when given (the results of a query this one contains, as typing narrows).
    package mutating func keys(matching query: String, among candidates: [String]? = nil) -> [String] {
        if searchText == nil {
            var texts: [String: String] = [:]
            texts.reserveCapacity(tree.count)
            for key in tree.keys {
                if let entry = entry(key) { texts[key] = Self.searchText(of: entry) }
            }
            searchText = texts
        }
        let needle = Array(query.lowercased().utf8)
        guard let texts = searchText else { return [] }
        return (candidates ?? tree.keys).filter { key in
            guard var text = texts[key] else { return false }
            return text.withUTF8 { Self.contains($0, needle) }
        }
    }

    /// Whether `needle` is in `bytes`: `memchr` finds each place its first byte is, `memcmp`
    /// compares the rest (the C library's loops, many times faster than a generic search).
    private static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard let base = bytes.baseAddress, bytes.count >= needle.count else { return false }
        var offset = 0
        let last = bytes.count - needle.count
        return needle.withUnsafeBytes { pattern in
            guard let pattern = pattern.baseAddress else { return false }
            while offset <= last {
                guard let found = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + at, pattern, needle.count) == 0 { return true }
                offset = at + 1
            }
            return false
        }
    }

    /// What the search reads of `entry`: its name, summary and value, in lower case.
    private static func searchText(of entry: KeyEntry) -> String {
        var text = entry.key
        if let summary = entry.rule?.summary { text += "\n" + summary }
        if let value = entry.value { text += "\n" + KeyEntry.text(value) }
        return text.lowercased()
    }
}
