import Testing

/// The suites that start real daemons run one after another: each drives daemon processes
/// (hundreds of threads, storms of frames, SIGKILLs) and blocks on them, and on a 2-core machine
/// running them side by side starves the test runner's threads and measures contention rather
/// than the daemon.
@Suite(.serialized, .timeLimit(.minutes(3)))
enum Reliability {}
