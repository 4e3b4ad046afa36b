import EventIO
import TLS

/// The open tunnel's state.
extension Tunnel {
    /// An open tunnel's far side and which of its directions have ended.
    struct Relay {
        /// The socket to the origin or the parent.
        let upstream: Connection
        /// TLS over `upstream` to an `https://` parent: the tunnel's bytes are its plain text.
        let parentTLS: TLSStream?
        var halfClose = HalfClose()
        /// Whether the client's first bytes were looked at yet.
        var firstBytes = FirstBytes.awaited

        /// The far side's byte stream: the socket, or the plain text of TLS to the parent.
        var far: any ClientStream { parentTLS ?? upstream }
    }

    /// The look at the client's first bytes (``TunnelContent``).
    enum FirstBytes: Equatable {
        /// Nothing came from either side yet, or too little to tell.
        case awaited
        /// Not HTTP, or the far side spoke first: bytes are relayed as they are.
        case settled
    }

    /// Half-close, one direction at a time (a client may end its side and still read).
    struct HalfClose: Equatable {
        /// One direction of the relay.
        enum Flow: Equatable {
            /// Bytes go on.
            case open
            /// The sender ended while bytes for the receiver were still waiting (plain text of
            /// a TLS parent): the end is passed on once they are written.
            case ending
            /// The end was passed on.
            case ended
        }
        /// Client to far side.
        var up = Flow.open
        /// Far side to client.
        var down = Flow.open
    }
}
