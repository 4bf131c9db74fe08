import Synchronization

/// Where `@Setting` properties without an explicit store find theirs, like `@EnvironmentObject`.
///
/// Set a process-wide default once at start-up, or scope one to a task:
///
/// ```swift
/// SettingsEnvironment.setDefault(try Settings(path: path))
/// // or, for the models made inside:
/// SettingsEnvironment.$current.withValue(testStore) { let model = PlayerModel() ... }
/// ```
///
/// A property takes the environment's store when its owner is made (or, if there is none yet,
/// when the property is first used) and keeps it from then on.
public enum SettingsEnvironment {
    /// A store scoped to the current task and its children; wins over the process default.
    @TaskLocal public static var current: Settings?

    private static let processDefault = Mutex<Settings?>(nil)

    /// Makes `settings` the store of every `@Setting` that names none (and no task-local is set).
    public static func setDefault(_ settings: Settings?) {
        processDefault.withLock { $0 = settings }
    }

    /// The store a property would resolve now: the task-local one, else the process default.
    public static var resolved: Settings? {
        current ?? processDefault.withLock { $0 }
    }
}
