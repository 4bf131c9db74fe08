package import SettingsStore
package import SettingsWire

extension BlockingClient {
    /// How many bytes of pipelined requests are written at a time.
    static let pipelineChunkBytes = 8 << 10

    /// Sends several requests at once and returns their answers in order (pipelining).
    ///
    /// Requests leave in chunks, so the daemon answers the first while the rest are written, and
    /// answers are read whenever the socket is full, so a pipeline of any length and any answer
    /// size goes through. Answers keep their fields as read (`WireAnswer`), without building a
    /// dictionary for each.
    package func pipeline(_ requests: [WireRequest]) throws(SettingsError) -> [Result<
        WireAnswer, SettingsError
    >] {
        var answers = PipelineAnswers(firstID: nextID, count: requests.count)
        startWaiting()
        defer { pendingEvents += answers.events }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.pipelineChunkBytes + 256)
        for request in requests {
            request.write(id: nextID, to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
            nextID += 1
            if bytes.count >= Self.pipelineChunkBytes {
                try write(bytes, waitingForRoom: false, collecting: &answers)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        try write(bytes, waitingForRoom: false, collecting: &answers)
        while !answers.isComplete {
            try answers.take(try receive())
            // A long pipeline may take longer than one answer may: each answer starts the wait anew.
            startWaiting()
        }
        return answers.results
    }
}

/// The answers of one pipeline as they arrive, and the watch events that come between them.
struct PipelineAnswers {
    /// The id of the pipeline's first request; answers to earlier ones are not its own.
    let firstID: Int64
    /// How many answers the pipeline waits for.
    let count: Int
    private(set) var results: [Result<WireAnswer, SettingsError>] = []
    private(set) var events: [WatchEvent] = []

    package init(firstID: Int64, count: Int) {
        self.firstID = firstID
        self.count = count
        results.reserveCapacity(count)
    }

    /// Whether every answer has arrived.
    var isComplete: Bool { results.count >= count }

    /// Keeps a frame that arrived.
    ///
    /// - Throws: The error of a frame without an id: the daemon closes the connection after it.
    mutating func take(_ incoming: WireMessage.Incoming) throws(SettingsError) {
        switch incoming {
        case .event(let watch, let change): events.append(WatchEvent(watch: watch, change: change))
        case .response(let id, let result):
            if id == nil, case .failure(let error) = result { throw error }
            if let id, id >= firstID { results.append(result) }
        }
    }
}
