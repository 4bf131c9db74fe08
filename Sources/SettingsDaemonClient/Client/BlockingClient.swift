package import SettingsStore
package import SettingsWire

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
    /// How long one answer may take as a whole (nil: for ever).
    private let timeout: Duration?
    /// When the answer awaited now must have arrived.
    private var deadline = Deadline.distantFuture

    /// Connects to the daemon at `socketPath`; an answer slower than `timeout` seconds as a whole
    /// (however the daemon trickles it) fails with `timeout`; 0 waits forever.
    ///
    /// - Throws: `SettingsError` with code `daemonNotRunning` when nothing listens there,
    ///   `accessDenied` when the process listening is not a trusted user's (`DaemonTrust`),
    ///   `invalidValue` for a negative or non-finite `timeout`.
    package init(socketPath: String, timeout: Double = 30) throws(SettingsError) {
        guard let duration = Duration(checkedSeconds: timeout) else {
            throw SettingsError(
                .invalidValue, "a client time-out must be 0 (none) or more seconds, not \(timeout)")
        }
        self.timeout = duration == .zero ? nil : duration
        self.socketPath = socketPath
        fd = try DaemonTrust.connect(path: socketPath)
    }

    /// Starts the wait for one answer.
    func startWaiting() {
        deadline = timeout.map(Deadline.after) ?? .distantFuture
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
        startWaiting()
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
        startWaiting()
        while true {
            switch try receive() {
            case .event(let watch, let change): return WatchEvent(watch: watch, change: change)
            case .response(nil, .failure(let error)): throw error
            case .response: continue
            }
        }
    }

    /// The socket's descriptor, for a caller that polls it beside others (the browser's loop):
    /// when it is readable, `arrivedEvent()` takes what came.
    package var descriptor: Int32 { fd }

    /// The next change event that has arrived, without waiting; nil when none has.
    package func arrivedEvent() throws(SettingsError) -> WatchEvent? {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        while let incoming = try receiveArrived() {
            switch incoming {
            case .event(let watch, let change): return WatchEvent(watch: watch, change: change)
            case .response(nil, .failure(let error)): throw error
            case .response: continue
            }
        }
        return nil
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
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN | POLLOUT), revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, deadline.pollTimeout) } while ready < 0 && errno == EINTR
        guard ready != 0 else {
            throw SettingsError(
                .timeout, "the daemon on '\(socketPath)' took no requests in time", path: socketPath)
        }
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
    private func fill(waiting: Bool) throws(SettingsError) -> Bool {
        while true {
            if waiting {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, deadline.pollTimeout)
                if ready < 0, errno == EINTR { continue }
                guard ready != 0 else {
                    throw SettingsError(
                        .timeout, "no answer from the daemon on '\(socketPath)' in time", path: socketPath)
                }
            }
            let count = readBuffer.receive(from: fd, flags: Int32(MSG_DONTWAIT))
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
