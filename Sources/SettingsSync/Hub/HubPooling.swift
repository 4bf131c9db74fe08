import SettingsStore
import SettingsWire

/// How a hub link learns of other replicas' changes, which depends on what stands between it
/// and PostgreSQL.
package enum HubPooling: String, Sendable, Equatable, CaseIterable {
    /// Found out on connecting: a connection pooler in front of PostgreSQL is polled through,
    /// a direct connection listens. A pooler is known by the server process it hands out not
    /// being the one it announced, or by its refusing the `options` startup parameter.
    case auto
    /// The link's session is its own (a direct connection, or a pooler in session pooling):
    /// it listens for notifications (`LISTEN`), so changes arrive within milliseconds.
    case session
    /// A pooler in transaction pooling (PgBouncer's `pool_mode = transaction`) hands each
    /// transaction any server connection, so nothing that lives in a session can be used: the
    /// link polls the namespace's counter (one index probe), quickly after activity and less
    /// often while all is quiet, within `HubConfiguration.pollInterval`.
    case transaction
}
