import EventIO
import Logging
import TLS

/// `record:`: writes the exchanges that pass into a ``Recording``, a batch ten times a second
/// (one transaction each, so a crash loses at most the last tenth of a second). A failed write
/// (the disk or `record.max_size` full) stops recording, logged once; what was written stays.
/// Loop-confined.
final class Recorder {
    enum State: Equatable {
        case recording
        case stopped(reason: String)
    }

    let settings: Configuration.Record
    private let recording: Recording
    private let logger: Logger
    private var pending: [RecordedExchange] = []
    private var pendingBytes = 0
    private var timer: Timer?
    private(set) var state = State.recording
    /// Exchanges written, and those lost to a stop.
    private(set) var written = 0
    private(set) var dropped = 0

    /// A batch is written early when it holds this many body bytes.
    static let batchBytes = 8 << 20

    init(settings: Configuration.Record, file: String, loop: EventLoop, logger: Logger) throws(Recording.Failure) {
        self.settings = settings
        recording = try Recording.openForWriting(file, maxBytes: settings.maxSize)
        self.logger = logger
        let timer = Timer(loop: loop, repeats: true) { [weak self] in self?.flush() }
        timer.schedule(milliseconds: 100)
        self.timer = timer
        logger.info("recording exchanges into \(file)")
    }

    var path: String { recording.path }
    var isRecording: Bool { state == .recording }

    /// Whether `record.match` takes a request for this host and path.
    func wants(host: String, path: String) -> Bool {
        guard isRecording else { return false }
        return settings.match.isEmpty || settings.match.contains { $0.matches(host: host, path: path) }
    }

    /// Adds one exchange to the next batch.
    func add(_ exchange: RecordedExchange) {
        guard isRecording else {
            dropped += 1
            return
        }
        pending.append(exchange)
        pendingBytes += exchange.requestBody.count + exchange.responseBody.count
        if pendingBytes >= Recorder.batchBytes { flush() }
    }

    /// Writes the batch.
    func flush() {
        guard !pending.isEmpty, isRecording else { return }
        let batch = pending
        pending = []
        pendingBytes = 0
        do {
            try recording.append(batch)
            written += batch.count
        } catch {
            dropped += batch.count
            let reason = error.isFull ? "the recording is full" : error.description
            state = .stopped(reason: reason)
            timer?.cancel()
            logger.error(
                "recording stopped: \(error.description); the \(written) exchange(s) written to \(recording.path) stay readable"
            )
        }
    }

    /// Writes what is left (at shutdown).
    func close() {
        flush()
        timer?.cancel()
        timer = nil
    }
}

/// What an exchange keeps of its request body for the recording: the first `limit` bytes and
/// the digest of all of it.
final class RecordingTap {
    let limit: Int
    private let digest = SHA256Stream()
    private(set) var body: [UInt8] = []
    private(set) var size: Int64 = 0

    init(limit: Int) { self.limit = limit }

    func request(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        digest.update(bytes)
        size += Int64(bytes.count)
        let room = limit - body.count
        if room > 0 { body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
    }

    /// The digest of the body seen so far, hex.
    func finishDigest() -> String { size == 0 ? RecordedExchange.emptyBodyDigest : digest.finishHex() }
}
