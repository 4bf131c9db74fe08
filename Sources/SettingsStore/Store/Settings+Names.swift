extension Settings {
    /// The longest name a replica may have, in characters.
    package static let maximumReplicaNameLength = 64

    /// The name this replica goes by (its machine's host name in a daemon, or what `--name`
    /// gave it), nil when it was never given one.
    public var replicaName: String? {
        name(ofReplica: replicaID)
    }

    /// The name `replica` was last known by here: its own, one a peer said in its hello, or one
    /// a hub listed; nil when none was heard. What `status` and `history` show instead of ids.
    public func name(ofReplica replica: ReplicaID) -> String? {
        knownNames()[replica]
    }

    /// The names every replica heard of goes by here.
    package func knownNames() -> [ReplicaID: String] {
        if let names = replicaNames.withLock({ $0 }) { return names }
        let loaded = writer.withLock { writer in (try? writer.backend?.replicaNames()) ?? [:] }
        return replicaNames.withLock { names in
            if names == nil { names = loaded }
            return names ?? loaded
        }
    }

    /// Records `name` for `replica` (durably, when the store can write): trimmed, at most 64
    /// characters, control characters dropped. An empty name, or the one already known, changes
    /// nothing.
    package func setName(_ name: String, ofReplica replica: ReplicaID) {
        let cleaned = Self.cleanedName(name)
        guard !cleaned.isEmpty, knownNames()[replica] != cleaned else { return }
        writer.withLock { writer in
            guard !configuration.isReadOnly else { return }
            try? writer.backend?.saveName(cleaned, ofReplica: replica)
        }
        replicaNames.withLock { names in names = (names ?? [:]).merging([replica: cleaned]) { $1 } }
    }

    /// `name` without control characters and surrounding white space, at most 64 characters.
    private static func cleanedName(_ name: String) -> String {
        var text = Substring(
            String(
                String.UnicodeScalarView(
                    name.unicodeScalars.filter { $0.properties.generalCategory != .control })))
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text.prefix(maximumReplicaNameLength))
    }
}
