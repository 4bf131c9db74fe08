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
/// let result = try client.request(.get(key: "audio.volume"))
/// ```
public final class BlockingClient {
    private let fd: Int32
    /// The socket this client is connected to.
    public let socketPath: String
    private var framer = LineFramer(maximumFrameBytes: 64 << 20)
    private var nextID: Int64 = 1
    private var pendingEvents: [WatchEvent] = []
    private let readBuffer = ReadBuffer()

    /// Connects to the daemon at `socketPath`; replies slower than `timeout` seconds fail with
    /// `timeout` (0 waits forever).
    ///
    /// - Throws: `SettingsError` with code `daemonNotRunning` when nothing listens there.
    public init(socketPath: String, timeout: Double = 30) throws(SettingsError) {
        self.socketPath = socketPath
        fd = try UnixSocket.connect(path: socketPath)
        var interval = timeval(
            tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    /// Sends `request` and waits for its answer; events that arrive first are kept for `nextEvent()`.
    ///
    /// - Returns: The response's fields.
    /// - Throws: The daemon's error, or a connection error.
    @discardableResult
    public func request(_ request: WireRequest) throws(SettingsError) -> [String: JSONValue] {
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
                return try result.get()
            }
        }
    }

    /// Imports `document` in one transaction, however large: it travels in parts that each fit
    /// a frame (`importPart`), and the daemon commits them all with the last one.
    ///
    /// - Returns: The response fields of the final `import`.
    @discardableResult
    public func importDocument(_ document: ExportDocument, replace: Bool) throws(SettingsError)
        -> [String: JSONValue]
    {
        var parts = document.parts(ofAbout: Self.importPartBytes)
        let last = parts.removeLast()
        for part in parts { try request(.importPart(document: part)) }
        return try request(.import(document: last, replace: replace))
    }

    /// The JSON bytes an import part carries, about: well inside the smallest frame a daemon accepts.
    static let importPartBytes = 512 << 10

    /// How many bytes of pipelined requests are written at a time.
    static let pipelineChunkBytes = 8 << 10

    /// Sends several requests at once and returns their answers in order (pipelining).
    public func pipeline(_ requests: [WireRequest]) throws(SettingsError) -> [Result<
        [String: JSONValue], SettingsError
    >] {
        let firstID = nextID
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.pipelineChunkBytes + 256)
        for request in requests {
            request.write(id: nextID, to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
            nextID += 1
            // Sent in chunks, so the daemon answers the first while the rest are being written.
            if bytes.count >= Self.pipelineChunkBytes {
                try write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        try write(bytes)
        var results: [Result<[String: JSONValue], SettingsError>] = []
        results.reserveCapacity(requests.count)
        while results.count < requests.count {
            switch try receive() {
            case .event(let watch, let change): pendingEvents.append(WatchEvent(watch: watch, change: change))
            case .response(let id, let result):
                if id == nil, case .failure(let error) = result { throw error }
                if let id, id >= firstID { results.append(result) }
            }
        }
        return results
    }

    /// Waits for the next change event of this connection's watches.
    public func nextEvent() throws(SettingsError) -> WatchEvent {
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
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                return Glibc.send(fd, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                // The daemon may have said why it closed (a refused user, an oversized frame).
                if case .response(nil, .failure(let reason))? = try? receive() { throw reason }
                throw SettingsError(
                    .connectionLost, "lost the connection to '\(socketPath)' while sending", path: socketPath)
            }
            offset += written
        }
    }

    /// Reads the next frame the daemon sent.
    package func receive() throws(SettingsError) -> WireMessage.Incoming {
        while true {
            if let frame = framer.nextFrame() {
                return try WireMessage.decode(frame: frame)
            }
            let count = readBuffer.receive(from: fd)
            if count > 0 {
                try framer.append(readBuffer.prefix(count))
            } else if count == 0 {
                throw SettingsError(
                    .connectionLost, "the daemon on '\(socketPath)' closed the connection", path: socketPath)
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw SettingsError(
                    .timeout, "no answer from the daemon on '\(socketPath)' in time", path: socketPath)
            } else if errno != EINTR {
                throw SettingsError(
                    .connectionLost, "lost the connection to '\(socketPath)'", path: socketPath)
            }
        }
    }

}

/// A change delivered to one of a connection's watches.
public struct WatchEvent: Sendable, Equatable {
    /// The watch's number, as `watch` answered it.
    public let watch: Int64
    /// The change, restricted to the keys the watch selects.
    public let change: SettingsChange
}
