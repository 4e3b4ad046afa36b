import EventIO
import Logging
import Synchronization
import TLS

/// `record:`: writes the exchanges that pass into a ``Recording``. The loop gathers them and
/// hands a batch ten times a second to a writer thread of its own, which writes it in one
/// transaction (a crash loses at most the last tenth of a second; the loop never waits on the
/// disk). A failed write (the disk or `record.max_size` full) stops recording, logged once;
/// what was written stays. Batches waiting for the writer are bounded (``backlogLimit``): past
/// that, exchanges are dropped and counted. Loop-confined, but for the writer's side.
final class Recorder: EventMonitor {
    enum State: Equatable {
        case recording
        case stopped(reason: String)
    }

    let settings: Configuration.Record
    let path: String
    private let logger: Logger
    private var pending: [PendingRecord] = []
    private var pendingBytes = 0
    private var timer: Timer?
    private let writer: LoopThread
    private let shared: Shared
    private(set) var state = State.recording
    /// Exchanges lost to a stop or to a writer that fell behind.
    private(set) var dropped = 0
    private var warnedBehind = false

    /// A batch is handed over early when it holds this many body bytes.
    static let batchBytes = 8 << 20
    /// The most body bytes handed over and not yet written.
    static let backlogLimit = 64 << 20

    /// What the writer thread reports back.
    private final class Shared: @unchecked Sendable {
        struct Counts {
            var written = 0
            var backlog = 0
            var failure: String?
        }
        let counts = Mutex(Counts())
        let recording: Recording  // used on the writer thread only, after it is made
        init(_ recording: Recording) { self.recording = recording }
    }

    init(settings: Configuration.Record, file: String, loop: EventLoop, logger: Logger) throws {
        self.settings = settings
        path = file
        shared = Shared(try Recording.openForWriting(file, maxBytes: settings.maxSize))
        writer = try LoopThread()
        self.logger = logger
        let timer = Timer(loop: loop, repeats: true) { [weak self] in self?.flush() }
        timer.schedule(milliseconds: 100)
        self.timer = timer
        logger.info("recording exchanges into \(file)")
    }

    var isRecording: Bool { state == .recording }
    /// Exchanges written so far.
    var written: Int { shared.counts.withLock { $0.written } }

    /// Whether `record.match` takes a request for this URL.
    func wants(_ url: TargetURL) -> Bool {
        guard isRecording else { return false }
        guard !settings.match.isEmpty else { return true }
        let path = url.path
        return settings.match.contains { $0.matches(host: url.host, path: path) }
    }

    /// Adds one exchange to the next batch.
    /// An exchange ended: what the recording keeps of it is written with the next batch.
    func exchangeDidComplete(_ record: ExchangeRecord) {
        guard let capture = record.capture, let entry = capture.recording else { return }
        capture.recording = nil  // the recorder's now; the page keeps the capture without it
        add(entry)
    }

    func add(_ exchange: PendingRecord) {
        guard isRecording else {
            dropped += 1
            return
        }
        pending.append(exchange)
        pendingBytes += exchange.requestBody.count + exchange.responseBody.count
        if pendingBytes >= Recorder.batchBytes { flush() }
    }

    /// Hands the batch to the writer (and hears what it had to say).
    func flush() {
        let (failure, backlog) = shared.counts.withLock { ($0.failure, $0.backlog) }
        if let failure, isRecording {
            state = .stopped(reason: failure)
            timer?.cancel()
            logger.error(
                "recording stopped: \(failure); the \(written) exchange(s) written to \(path) stay readable")
        }
        guard !pending.isEmpty else { return }
        let batch = pending
        let bytes = pendingBytes
        pending = []
        pendingBytes = 0
        guard isRecording else {
            dropped += batch.count
            return
        }
        guard backlog + bytes <= Recorder.backlogLimit else {
            dropped += batch.count
            if !warnedBehind {
                warnedBehind = true
                logger.warning("recording falls behind the traffic (the disk is slow): exchanges are dropped")
            }
            return
        }
        shared.counts.withLock { $0.backlog += bytes }
        let shared = self.shared
        let keepCredentials = settings.keepCredentials
        writer.loop.execute {
            let stopped = shared.counts.withLock { $0.failure != nil }
            var failure: String?
            if !stopped {
                do throws(Recording.Failure) {
                    try shared.recording.append(rows: batch.map { RecordingRow($0, keepCredentials: keepCredentials) })
                } catch {
                    failure = error.description
                }
            }
            shared.counts.withLock { counts in
                counts.backlog -= bytes
                if let failure {
                    counts.failure = counts.failure ?? failure
                } else if !stopped {
                    counts.written += batch.count
                }
            }
        }
    }

    /// Writes what is left and waits for the writer (at shutdown).
    func close() {
        flush()
        timer?.cancel()
        timer = nil
        writer.stop()
        flush()  // says a failure of the last batch
    }
}

/// What an exchange keeps of its request body for the recording: the first `limit` bytes and
/// the digest of all of it.
final class RecordingTap {
    let limit: Int
    /// Made with the first byte: most requests have no body.
    private lazy var digest = SHA256Stream()
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
