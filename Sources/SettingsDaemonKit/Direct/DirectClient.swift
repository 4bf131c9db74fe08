import SettingsDaemonClient
import SettingsGNOME
package import SettingsStore
import SettingsSync
package import SettingsWire

/// Answers wire requests from a store opened in this process, exactly as the daemon would:
/// for tools working on a database file when no daemon holds it (`settingsd --db PATH`).
package final class DirectClient: SettingsService, Sendable {
    /// The store requests run against.
    package let settings: Settings
    private let handler: RequestHandler

    /// Serves requests from `settings`.
    package init(settings: Settings) {
        self.settings = settings
        self.handler = RequestHandler(settings: settings, server: nil)
    }

    /// Runs `request` and returns the response's fields; writes commit before it returns.
    /// `watch` and `unwatch` need a daemon and throw `unknownOperation`.
    package func answer(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue] {
        switch handler.handle(request) {
        case .answer(let result):
            return try result.get()
        case .value(let value, let version):
            return WireMessage.valueFields(value, version: version)
        case .write(let reason, let apply):
            return try settings.typed {
                var result = try settings.transaction(reason: reason, apply)
                result["sequence"] = .integer(settings.sequence)
                return result
            }
        }
    }

    /// Imports `document` in one transaction: in process, no document is too large for one request.
    package func answerImport(_ document: ExportDocument, replacingExisting: Bool, under prefixes: [String])
        throws(SettingsError) -> [String: JSONValue]
    {
        try answer(.import(document: document, replace: replacingExisting, replacingUnder: prefixes))
    }
}
