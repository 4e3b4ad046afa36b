import Curl

extension UpstreamTask {
    /// One transfer of the task (the first request, or one after a followed redirect).
    /// A class: the phases hold it by reference, so reading a header line never copies the
    /// section read so far, and a phase change moves one pointer.
    final class Transfer {
        /// What carries it.
        let carrier: Carrier
        /// The header sections as they arrive.
        var head: ResponseHeadParser
        /// When it started (monotonic nanoseconds), for ``UpstreamTask/timeToHead``.
        let startTime: UInt64

        init(carrier: Carrier, head: ResponseHeadParser, startTime: UInt64) {
            self.carrier = carrier
            self.head = head
            self.startTime = startTime
        }

        /// The head went with `Expect: 100-continue` and none of the body has gone yet (only
        /// the native transport forwards an expectation).
        var awaitsContinue: Bool {
            if case .native(let native) = carrier { return native.awaitsContinue }
            return false
        }
    }

    /// The transport of one transfer, with what it runs on.
    enum Carrier {
        /// A libcurl handle, checked out of the session's pool for this transfer.
        case curl(EasyHandle)
        /// A native HTTP/1.1 exchange on a pooled connection.
        case native(NativeTransfer)
    }

    /// Which transport carried a transfer (the access log and the page say it).
    public enum Engine: String, Sendable {
        case native
        case curl
    }
}

/// What a transport does after handing the task a header line or a body piece.
enum TransferStep: Equatable {
    /// Go on.
    case proceed
    /// Hold the rest until ``UpstreamTask/resume()`` (the client has not taken this piece).
    case pause
    /// Stop the transfer: the task has failed.
    case abort
}

/// Why a transport's transfer did not end whole, in its own terms.
enum TransferFailure {
    /// libcurl's error (turned into the client's terms by ``UpstreamTask/convert(_:)``).
    case curl(CurlError)
    /// The native transport's error, already in the client's terms.
    case native(SluiceError)
    /// The native transport cannot carry this transfer (an origin that speaks only HTTP/2):
    /// nothing was sent or received, and libcurl carries it instead.
    case declined
}

/// The phases of one transfer, each in seconds from its start (cumulative, as libcurl counts):
/// name resolved, connected, TLS agreed (0 for plain HTTP or a reused connection), first byte.
public struct TransferTimings: Sendable, Equatable {
    public var nameLookup = 0.0
    public var connect = 0.0
    public var tls = 0.0
    public var firstByte = 0.0
    public init() {}

    init(_ curl: EasyHandle.Timings) {
        nameLookup = curl.nameLookup
        connect = curl.connect
        tls = curl.tls
        firstByte = curl.firstByte
    }
}
