#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// One run of a replica's database: an id minted each time the file is opened for writing, and
/// the sequence number the run started from.
package struct Incarnation: Hashable, Sendable {
    package let id: UUID
    package let startSequence: Int64

    package init(id: UUID, startSequence: Int64) {
        self.id = id
        self.startSequence = startSequence
    }
}

/// A replica's incarnations, oldest first: the proof that its history continues what its peers
/// received from it. A file restored from a backup, or copied and opened elsewhere, starts a
/// lineage that lacks the incarnations its peers saw since, which is how they tell (see
/// `docs/SYNC.md`).
package struct Lineage: Sendable, Equatable {
    /// The most incarnations kept; a peer last heard from further back is treated as a fork,
    /// which costs a full resync and loses nothing.
    package static let limit = 256

    package private(set) var incarnations: [Incarnation]

    /// A lineage of one fresh incarnation starting at `sequence`.
    package init(startingAt sequence: Int64) {
        incarnations = [Incarnation(id: UUID(), startSequence: sequence)]
    }

    /// A stored lineage, oldest first; it must not be empty.
    package init(_ incarnations: [Incarnation]) {
        self.incarnations = incarnations.isEmpty ? [Incarnation(id: UUID(), startSequence: 0)] : incarnations
    }

    /// The running incarnation.
    package var current: Incarnation { incarnations[incarnations.count - 1] }

    /// Appends a new incarnation starting at `sequence`, dropping the oldest past `limit`.
    mutating func begin(at sequence: Int64) -> Incarnation {
        let next = Incarnation(id: UUID(), startSequence: sequence)
        incarnations.append(next)
        if incarnations.count > Self.limit { incarnations.removeFirst(incarnations.count - Self.limit) }
        return next
    }

    /// Whether a peer that received this replica's changes through `cursor`, while it ran as
    /// `incarnation`, is looking at this same history now that it is at `sequence`.
    ///
    /// It is when that incarnation is in the lineage and the cursor is within what it wrote (up
    /// to where the next one started, or to `sequence` for the running one). A record without
    /// an incarnation (written before they existed) only needs the cursor not to be ahead.
    package func continues(cursor: Int64, recordedUnder incarnation: UUID?, sequence: Int64) -> Bool {
        guard let incarnation else { return cursor <= sequence }
        guard let index = incarnations.firstIndex(where: { $0.id == incarnation }) else { return false }
        let end = index + 1 < incarnations.count ? incarnations[index + 1].startSequence : sequence
        return cursor <= end
    }
}
