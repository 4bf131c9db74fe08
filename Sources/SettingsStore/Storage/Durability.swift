/// How much a commit survives, chosen when a store is opened.
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=NORMAL`: nothing acknowledged is lost when the process crashes;
    /// the last commits may be lost on power loss or a kernel crash.
    case normal
    /// WAL with `synchronous=FULL`: every acknowledged commit is on disk (fsync) before it returns.
    case full
}
