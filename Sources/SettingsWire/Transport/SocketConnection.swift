package import Dispatch
package import SettingsStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One non-blocking stream socket driven by Dispatch sources: frames in, JSON frames out.
///
/// Every callback runs on `queue`, and every method but `start()` must be called there. Outbound bytes are buffered up to `outboundLimit`; past it the connection is closed with
/// `overloaded`, so a peer that stops reading cannot make this process grow without bound.
///
/// Unchecked Sendable: all mutable state is confined to the serial `queue`.
package final class SocketConnection: @unchecked Sendable {  // state on its serial queue only
    let fd: Int32
    package let queue: DispatchQueue
    private var framer: LineFramer
    private let readBuffer = ReadBuffer()
    private var outbound: OutboundBuffer
    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private var isWriteSourceActive = false
    private var isReadingPaused = false
    private(set) var isClosed = false

    /// Called with each complete frame.
    package var onFrame: (ArraySlice<UInt8>) -> Void = { _ in }
    /// Called once when the connection closes: nil for an orderly end, else why.
    package var onClose: (SettingsError?) -> Void = { _ in }

    /// Wraps a connected socket; callbacks run on `queue` (a new serial queue when nil).
    package init(
        fd: Int32, label: String, maximumFrameBytes: Int, outboundLimit: Int, queue: DispatchQueue? = nil
    ) {
        self.fd = fd
        self.queue = queue ?? DispatchQueue(label: label)
        self.framer = LineFramer(maximumFrameBytes: maximumFrameBytes)
        self.outbound = OutboundBuffer(limit: outboundLimit)
        UnixSocket.setNonBlocking(fd)
    }

    /// Starts reading; call once, on any thread.
    package func start() {
        queue.async { [self] in
            guard !isClosed else { return }
            let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            read.setEventHandler { [weak self] in self?.readAvailable() }
            let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            write.setEventHandler { [weak self] in self?.flush() }
            // The descriptor may be closed only when neither source watches it any more.
            let closer = DescriptorCloser(fd: fd, sources: 2)
            read.setCancelHandler { closer.sourceCancelled() }
            write.setCancelHandler { closer.sourceCancelled() }
            readSource = read
            writeSource = write
            read.resume()
        }
    }

    /// Queues a frame and writes what the socket takes now.
    package func send(_ message: JSONValue) {
        send { message.write(to: &$0) }
    }

    /// Queues a frame whose text `write` appends in place, and writes what the socket takes now.
    package func send(writing write: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        do throws(SettingsError) {
            try outbound.appendFrame(write)
        } catch {
            fail(error)
            return
        }
        flush()
    }

    /// Sends a last error frame (best effort), then closes.
    package func fail(_ error: SettingsError) {
        guard !isClosed else { return }
        OutboundBuffer.sendLastWord(error, to: fd)
        close(error)
    }

    /// Stops reading until `resumeReading()`: the peer's bytes wait in the socket, and once its
    /// buffer is full, the peer waits.
    package func pauseReading() {
        guard !isClosed, !isReadingPaused, let readSource else { return }
        isReadingPaused = true
        readSource.suspend()
    }

    /// Reads again after `pauseReading()`.
    package func resumeReading() {
        guard !isClosed, isReadingPaused, let readSource else { return }
        isReadingPaused = false
        readSource.resume()
    }

    /// Closes the socket now; `onClose` runs once.
    package func close(_ error: SettingsError? = nil) {
        guard !isClosed else { return }
        isClosed = true
        if let readSource, let writeSource {
            // Dispatch requires a suspended source to be resumed before it is cancelled.
            if !isWriteSourceActive { writeSource.resume() }
            if isReadingPaused { readSource.resume() }
            readSource.cancel()
            writeSource.cancel()
        } else {
            Glibc.close(fd)  // never started: no source watches the descriptor
        }
        readSource = nil
        writeSource = nil
        outbound.discard()
        onClose(error)
        onFrame = { _ in }
        onClose = { _ in }
    }

    private func readAvailable() {
        while !isClosed, !isReadingPaused {
            switch readBuffer.read(from: fd, into: &framer) {
            case .received: deliverFrames()
            case .endOfStream: return close()
            case .wouldBlock: return
            case .frameTooLarge(let error): return fail(error)
            case .failed(let error): return close(error)
            }
        }
    }

    private func deliverFrames() {
        // Frames already read are delivered even when a pause was asked for meanwhile: the pause
        // bounds what is read next.
        while !isClosed, let frame = framer.nextFrame() {
            onFrame(frame)
        }
    }

    private func flush() {
        guard !isClosed else { return }
        switch outbound.flush(to: fd) {
        case .wouldBlock:
            if !isWriteSourceActive {
                isWriteSourceActive = true
                writeSource?.resume()
            }
        case .failed(let error):
            close(error)
        case .drained:
            if isWriteSourceActive {
                isWriteSourceActive = false
                writeSource?.suspend()
            }
        }
    }
}

/// Closes a descriptor once every Dispatch source on it has been cancelled.
///
/// Unchecked Sendable: the cancel handlers that call it all run on the connection's serial queue.
private final class DescriptorCloser: @unchecked Sendable {  // used on one serial queue
    private let fd: Int32
    private var remaining: Int

    package init(fd: Int32, sources: Int) {
        self.fd = fd
        self.remaining = sources
    }

    func sourceCancelled() {
        remaining -= 1
        if remaining == 0 { Glibc.close(fd) }
    }
}
