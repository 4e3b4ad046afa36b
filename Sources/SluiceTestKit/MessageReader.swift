import Foundation

/// Reads HTTP/1.1 messages from a blocking ``TestSocket`` (for the test origin and raw clients).
public final class MessageReader {
    let socket: TestSocket
    private var buffer: [UInt8] = []
    /// Whether the peer closed its side.
    public private(set) var atEnd = false
    /// The bytes of the last head ``readHead()`` read, its empty line excluded: the exact bytes
    /// (the fields it returns are decoded as UTF-8).
    public private(set) var lastHead: [UInt8] = []

    public init(socket: TestSocket) { self.socket = socket }

    private func fill() throws -> Bool {
        if atEnd { return false }
        let bytes = try socket.receive()
        if bytes.isEmpty {
            atEnd = true
            return false
        }
        buffer += bytes
        return true
    }

    /// The head (start line and fields) up to the empty line, or `nil` at a clean end of stream.
    public func readHead() throws -> (startLine: String, fields: [(String, String)])? {
        while true {
            if let end = findHeadEnd() {
                lastHead = Array(buffer[0..<end])
                let text = String(decoding: lastHead, as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let start = lines.removeFirst()
                let fields = lines.map { line -> (String, String) in
                    guard let colon = line.firstIndex(of: ":") else { return (line, "") }
                    return (
                        String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                }
                return (start, fields)
            }
            if try !fill() {
                if buffer.isEmpty { return nil }
                throw TestError("stream ended inside a head: \(String(decoding: buffer, as: UTF8.self))")
            }
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Exactly `count` bytes (throws if the stream ends first).
    public func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            if try !fill() { throw TestError("stream ended after \(buffer.count) of \(count) bytes") }
        }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads and discards `count` bytes without keeping them (large bodies), returning how many arrived.
    public func skip(_ count: Int) throws -> Int {
        var remaining = count
        let taken = min(buffer.count, remaining)
        buffer.removeFirst(taken)
        remaining -= taken
        while remaining > 0 {
            let bytes = try socket.receive(max: min(remaining, 256 * 1024))
            if bytes.isEmpty { break }
            remaining -= bytes.count
        }
        return count - remaining
    }

    /// One CRLF-terminated line.
    public func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10), index > 0, buffer[index - 1] == 13 {
                let line = String(decoding: buffer[0..<(index - 1)], as: UTF8.self)
                buffer.removeFirst(index + 1)
                return line
            }
            if try !fill() { throw TestError("stream ended inside a line") }
        }
    }

    /// One LF-terminated line, a CR before the LF dropped (Server-Sent Events use bare LF).
    public func readEventLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let end = index > 0 && buffer[index - 1] == 13 ? index - 1 : index
                let line = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(index + 1)
                return line
            }
            if try !fill() { throw TestError("stream ended inside a line") }
        }
    }

    /// The trailer fields of the last chunked body read.
    public private(set) var lastTrailers: [(String, String)] = []

    /// A chunked body, decoded (its trailer fields in ``lastTrailers``).
    public func readChunked() throws -> [UInt8] {
        lastTrailers = []
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine()
            let sizeText = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw TestError("bad chunk size line \(sizeLine)")
            }
            if size == 0 {
                while true {
                    let line = try readLine()
                    if line.isEmpty { return body }
                    let parts = line.split(separator: ":", maxSplits: 1).map(String.init)
                    lastTrailers.append(
                        (parts[0], parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""))
                }
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw TestError("chunk not followed by CRLF") }
        }
    }

    /// Everything until the peer closes.
    public func readToEnd() throws -> [UInt8] {
        while try fill() {}
        let bytes = buffer
        buffer.removeAll()
        return bytes
    }
}

/// A response as a client received it.
public struct ReceivedResponse: Sendable {
    public var status: Int
    public var statusLine: String
    public var fields: [(String, String)]
    public var body: [UInt8]
    /// Trailer fields after a chunked body.
    public var trailers: [(String, String)] = []

    /// The first value of `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        fields.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Every value of `name`.
    public func headers(_ name: String) -> [String] {
        fields.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

extension MessageReader {
    /// Reads one response to a request with `method` (HEAD responses have no body).
    public func readResponse(method: String = "GET") throws -> ReceivedResponse {
        while true {
            guard let head = try readHead() else { throw TestError("connection closed before a response") }
            let parts = head.startLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let status = Int(parts[1]) else {
                throw TestError("bad status line \(head.startLine)")
            }
            if status >= 100 && status < 200 { continue }
            var response = ReceivedResponse(status: status, statusLine: head.startLine, fields: head.fields, body: [])
            if method == "HEAD" || status == 204 || status == 304 { return response }
            if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
                response.body = try readChunked()
                response.trailers = lastTrailers
            } else if let length = response.header("content-length").flatMap(Int.init) {
                response.body = try readExactly(length)
            } else {
                response.body = try readToEnd()
            }
            return response
        }
    }
}
