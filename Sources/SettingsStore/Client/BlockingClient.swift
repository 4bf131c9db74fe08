#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A synchronous connection to a daemon, for command-line tools and scripts: no threads, no
/// Dispatch, one blocking socket. Not thread-safe; use one per thread (apps want `SettingsClient`).
///
/// ```swift
/// let client = try BlockingClient(socketPath: SettingsPaths.socket)
/// let volume = try client.value(forKey: "audio.volume")
/// ```
package final class BlockingClient: SettingsService {
    private let fd: Int32
    /// The socket this client is connected to.
    package let socketPath: String
    private var framer = LineFramer(maximumFrameBytes: 64 << 20)
    var nextID: Int64 = 1
    var pendingEvents: [WatchEvent] = []
    private let readBuffer = ReadBuffer()
    /// Whether the last read filled the buffer, so more may wait in the socket: the next read
    /// tries at once instead of waiting in `poll` first.
    private var mayHaveMore = false
    /// How long a wait for the daemon may last, for `poll` (-1: forever).
    private let timeoutMilliseconds: Int32

    /// Connects to the daemon at `socketPath`; replies slower than `timeout` seconds fail with
    /// `timeout` (0 waits forever).
    ///
    /// - Throws: `SettingsError` with code `daemonNotRunning` when nothing listens there.
    package init(socketPath: String, timeout: Double = 30) throws(SettingsError) {
        self.socketPath = socketPath
        fd = try UnixSocket.connect(path: socketPath)
        timeoutMilliseconds = timeout > 0 ? Int32(clamping: Int((timeout * 1000).rounded(.up))) : -1
    }

    deinit {
        close(fd)
    }

    /// Sends `request` and waits for its answer; events that arrive first are kept for `nextEvent()`.
    ///
    /// - Returns: The response's fields.
    /// - Throws: The daemon's error, or a connection error.
    @discardableResult
    package func request(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue] {
        let id = nextID
        nextID += 1
        var bytes: [UInt8] = []
        request.write(id: id, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        try write(bytes)
        while true {
            switch try receive() {
            case .event(let watch, let change):
                pendingEvents.append(WatchEvent(watch: watch, change: change))
            case .response(let responseID, let result):
                guard responseID == id else {
                    if responseID == nil, case .failure(let error) = result { throw error }
                    continue
                }
                return try result.get().fields
            }
        }
    }

    /// Sends `request` and waits for its answer (`request(_:)`, as `SettingsService` names it).
    package func answer(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue] {
        try self.request(request)
    }

    /// Imports `document` in one transaction, however large: it travels in parts that each fit
    /// a frame (`importPart`), and the daemon commits them all with the last one.
    ///
    /// - Returns: The response fields of the final `import`.
    package func answerImport(_ document: ExportDocument, replacingExisting: Bool, under prefixes: [String])
        throws(SettingsError) -> [String: JSONValue]
    {
        var parts = document.parts(ofAbout: Self.importPartBytes)
        let last = parts.removeLast()
        for part in parts { try request(.importPart(document: part)) }
        return try request(.import(document: last, replace: replacingExisting, replacingUnder: prefixes))
    }

    /// The JSON bytes an import part carries, about: well inside the smallest frame a daemon accepts.
    static let importPartBytes = 512 << 10

    /// Waits for the next change event of this connection's watches.
    package func nextEvent() throws(SettingsError) -> WatchEvent {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        while true {
            switch try receive() {
            case .event(let watch, let change): return WatchEvent(watch: watch, change: change)
            case .response(nil, .failure(let error)): throw error
            case .response: continue
            }
        }
    }

    /// Sends raw bytes, as is (for tests of malformed input).
    package func write(_ bytes: [UInt8]) throws(SettingsError) {
        var unused = PipelineAnswers(firstID: .max, count: 0)
        try write(bytes, waitingForRoom: true, collecting: &unused)
    }

    /// Sends bytes. Unless `waitingForRoom`, a full socket does not block: the frames that have
    /// arrived go to `answers` first, since the daemon may be waiting for this side to read its
    /// answers (a long pipeline), and then the send waits for room.
    func write(_ bytes: [UInt8], waitingForRoom: Bool, collecting answers: inout PipelineAnswers)
        throws(SettingsError)
    {
        var offset = 0
        let flags = Int32(MSG_NOSIGNAL) | (waitingForRoom ? 0 : Int32(MSG_DONTWAIT))
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return Glibc.send(fd, rest.baseAddress, rest.count, flags)
            }
            if written < 0 {
                if errno == EINTR { continue }
                if !waitingForRoom, errno == EAGAIN || errno == EWOULDBLOCK {
                    while let incoming = try receiveArrived() { try answers.take(incoming) }
                    try waitForRoom()
                    continue
                }
                // The daemon may have said why it closed (a refused user, an oversized frame).
                if case .response(nil, .failure(let reason))? = try? receive() { throw reason }
                throw SettingsError(
                    .connectionLost, "lost the connection to '\(socketPath)' while sending", path: socketPath)
            }
            offset += written
        }
    }

    /// Waits until the socket takes more bytes or has some to read, for the reply time-out.
    private func waitForRoom() throws(SettingsError) {
        guard wait(for: POLLIN | POLLOUT) else {
            throw SettingsError(
                .timeout, "the daemon on '\(socketPath)' took no requests in time", path: socketPath)
        }
    }

    /// Waits until the socket has bytes to read (or the daemon closed it), for the reply time-out.
    private func waitUntilReadable() throws(SettingsError) {
        guard wait(for: POLLIN) else {
            throw SettingsError(
                .timeout, "no answer from the daemon on '\(socketPath)' in time", path: socketPath)
        }
    }

    /// Waits in `poll` for `events` (a hang-up or an error ends the wait too); false on time-out.
    private func wait(for events: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, timeoutMilliseconds) } while ready < 0 && errno == EINTR
        return ready != 0
    }

    /// Reads the next frame the daemon sent.
    package func receive() throws(SettingsError) -> WireMessage.Incoming {
        while true {
            if let frame = framer.nextFrame() { return try WireMessage.decode(frame: frame) }
            _ = try fill(waiting: true)
        }
    }

    /// Reads the next frame the daemon sent, or nil when none has arrived yet.
    func receiveArrived() throws(SettingsError) -> WireMessage.Incoming? {
        while true {
            if let frame = framer.nextFrame() { return try WireMessage.decode(frame: frame) }
            guard try fill(waiting: false) else { return nil }
        }
    }

    /// Reads what the socket has into the framer; false when nothing had arrived (only when not
    /// `waiting`: a wait that ends empty is a time-out).
    ///
    /// A wait is spent in `poll(POLLIN)`, not in a blocking `recv`: the daemon's reading of a
    /// request frees room in this socket's send buffer, and the kernel wakes every thread asleep
    /// on the socket to say so, which wakes a `recv` that then finds nothing and sleeps again,
    /// while `poll` sleeps through wake-ups for room it did not ask about. With 32 writers that
    /// wake-up was 8 % of the daemon's CPU (`unix_write_space`, `perf record`), and each client
    /// switched in and out once more per request.
    private func fill(waiting: Bool) throws(SettingsError) -> Bool {
        while true {
            if waiting && !mayHaveMore { try waitUntilReadable() }
            let count = readBuffer.receive(from: fd, flags: Int32(MSG_DONTWAIT))
            mayHaveMore = count == readBuffer.bytes.count
            if count > 0 {
                try framer.append(readBuffer.prefix(count))
                return true
            } else if count == 0 {
                throw SettingsError(
                    .connectionLost, "the daemon on '\(socketPath)' closed the connection", path: socketPath)
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                guard waiting else { return false }
            } else if errno != EINTR {
                throw SettingsError(
                    .connectionLost, "lost the connection to '\(socketPath)'", path: socketPath)
            }
        }
    }
}

/// A change delivered to one of a connection's watches.
package struct WatchEvent: Sendable, Equatable {
    /// The watch's number, as `watch` answered it.
    package let watch: Int64
    /// The change, restricted to the keys the watch selects.
    package let change: SettingsChange
}
