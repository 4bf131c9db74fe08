/// A class whose `@Setting` properties announce their changes through `objectWillChange`.
///
/// ```swift
/// final class PlayerModel: SettingsOwner {
///     let objectWillChange = ObjectWillChangePublisher()
///     @Setting(.volume) var volume
///     @Setting("ui.theme") var theme = "light"
/// }
/// let token = model.objectWillChange.sink { print("redraw") }
/// ```
///
/// The owner is told once per committed change of a key it has read or written, whatever made
/// the change, and never for keys it has not touched. `@MainActor` classes conform as they are.
public protocol SettingsOwner: AnyObject {
    /// The publisher that fires when a setting this object has used changes.
    var objectWillChange: ObjectWillChangePublisher { get }
}
