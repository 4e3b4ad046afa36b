/// A client that speaks raw bytes to the proxy: for malformed input and precise framing checks.
public final class RawClient {
    /// The socket.
    public let socket: TestSocket
    /// Reads responses from it.
    public let reader: MessageReader

    /// Connects to the proxy on `host`:`port`.
    public init(host: String = "127.0.0.1", port: UInt16, timeout: Double = 10) throws {
        socket = try TestSocket.connect(host: host, port: port, timeout: timeout)
        reader = MessageReader(socket: socket)
    }

    /// Sends raw text.
    public func send(_ text: String) throws { try socket.send(text) }

    /// Sends a request and reads its response.
    public func request(_ text: String, method: String = "GET") throws -> ReceivedResponse {
        try socket.send(text)
        return try reader.readResponse(method: method)
    }

    /// A GET in absolute form for `url` with a Host field.
    public static func get(_ url: String, extra: String = "") -> String {
        let authority = url.split(separator: "/")[1]
        return "GET \(url) HTTP/1.1\r\nHost: \(authority)\r\n\(extra)\r\n"
    }

    /// Whether the proxy closed the connection (reads until end of stream or timeout).
    public func isClosedByPeer() -> Bool {
        do { return try reader.readToEnd().isEmpty || reader.atEnd } catch { return false }
    }
}
