import EventIO
import TLS

/// An upgrade's phases and what they hold: the origin's side, and a refusal's body left to pass.
extension Upgrade {
    /// The origin's side: the socket, TLS to an `https://` parent, TLS to an `https://` origin.
    struct Far {
        let upstream: Connection
        let parentTLS: TLSStream?
        var originTLS: TLSStream?
        /// The origin's plain byte stream.
        var stream: any ClientStream {
            if let originTLS { return originTLS }
            if let parentTLS { return parentTLS }
            return upstream
        }
    }

    /// A refusal's body still on its way to the client.
    enum BodyLeft {
        case length(Int64)
        case chunked(ChunkedDecoder)
        case untilClose
    }

    enum Phase {
        case idle
        /// Held at a request breakpoint before anything went to the origin (a person decides).
        case paused
        case dialing(Dialer)
        /// TLS with an `https://` origin.
        case securing(Far)
        /// The request head went out; the response head is being read.
        case awaitingHead(Far, ResponseHeadParser)
        /// Switched: the ``Relay`` moves bytes both ways (and its far side is this `Far`).
        case relaying(Relay)
        /// The origin refused the upgrade: its response goes back as it comes, then the connection closes.
        case passingBack(Far, BodyLeft)
        case finished
    }
}
