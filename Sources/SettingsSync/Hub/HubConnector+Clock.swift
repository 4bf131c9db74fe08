import SettingsStore
import SettingsWire

extension HubConnector {
    /// Compares this replica's clock with the hub server's, once a connection, as socket peers
    /// compare theirs at hello: shown in `status`, and logged when beyond
    /// `SettingsConfiguration.maximumClockSkew`. Writes still order correctly either way; the
    /// warning is for the person whose clock is wrong.
    func measureClock(on connection: PostgresConnection) throws(SettingsError) {
        let before = settings.configuration.clock()
        let rows = try connection.execute(
            "SELECT (extract(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint")
        let after = settings.configuration.clock()
        // The server's reading is hub input: one that makes no offset is not computed with.
        guard rows.count == 1, !rows.isNull(0, 0) else { return }
        let middle = Int64(clamping: before / 2 + after / 2)
        let (offset, overflow) = rows.int64(0, 0).subtractingReportingOverflow(middle)
        guard !overflow else { return }
        update { $0.clockOffsetMilliseconds = offset }
        let bound = settings.configuration.maximumClockSkewMilliseconds
        guard offset.magnitude > bound else { return }
        logger?.log(
            .warning,
            "the hub's clock is \(offset.magnitude / 1000) s \(offset > 0 ? "ahead of" : "behind") this one, beyond the \(bound / 1000) s bound: this machine's clock or the server's is wrong; writes still order correctly, but check both clocks"
        )
    }
}
