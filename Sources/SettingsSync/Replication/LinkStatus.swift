public import SettingsStore
import SettingsWire

/// The health of a link this replica dials (`Replicator.sync(with:)`, `settingsd run --peer`).
public struct LinkStatus: Sendable, Equatable {
    /// Where a link stands.
    public enum State: String, Sendable {
        /// Dialling, or waiting to dial again.
        case connecting
        /// Connected, waiting for the peer's hello answer.
        case handshaking
        /// Syncing.
        case syncing
    }

    /// The socket dialled.
    public let address: String
    /// Where the link stands.
    public var state: State = .connecting
    /// The peer's replica id, once it answered.
    public var peer: ReplicaID?
    /// Why the last attempt failed, if it did.
    public var lastError: String?
    /// Attempts that failed in a row.
    public var failures = 0

    package init(address: String) {
        self.address = address
    }
}
