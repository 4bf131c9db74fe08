import Testing

/// The suites that start real daemons, in three groups. Within a group suites run one after
/// another: each drives daemon processes (hundreds of threads, storms of frames, SIGKILLs), and
/// on a 2-core machine more of them side by side measures contention rather than the daemon.
/// The groups run side by side, each on threads of its own (`ownThreads`), so that a test
/// blocked on a daemon or on `psql` never holds up the cooperative pool the other tests use.
///
/// The daemon, its command line, history and policy through the daemon.
@Suite(.serialized, .ownThreads, .timeLimit(.minutes(3)))
enum Reliability {}

/// Replication between real daemons and stores, fuzzing, crashes and load.
@Suite(.serialized, .ownThreads, .timeLimit(.minutes(3)))
enum SyncReliability {}

/// The PostgreSQL hub (a real PostgreSQL, and PgBouncer).
@Suite(.serialized, .ownThreads, .timeLimit(.minutes(3)))
enum HubReliability {}

/// Ways of syncing beside sockets and the hub: SSH peers (a real sshd) and synced folders.
@Suite(.serialized, .ownThreads, .timeLimit(.minutes(3)))
enum TransportReliability {}
