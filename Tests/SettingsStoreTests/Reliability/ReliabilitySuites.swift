import Testing

/// The reliability suites run one after another: each drives a daemon hard (hundreds of
/// threads, storms of frames, SIGKILLs), and on a 2-core machine running them side by side
/// would measure the machine's contention rather than the daemon.
@Suite(.serialized)
enum Reliability {}
