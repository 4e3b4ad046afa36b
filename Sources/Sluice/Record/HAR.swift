import Codec
import Contract
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// HAR 1.2 (the format Chrome DevTools, Firefox, Charles, Proxyman and mitmproxy export) to
/// recorded exchanges and back. Import reads the whole document and checks every entry before
/// anything is written: a broken HAR is refused with the entry and field at fault.
public enum HAR {
    /// Why a HAR cannot be imported: where (`log.entries[3].response.content.text`) and what.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// What an import made: the exchanges, and the entries left out with why.
    public struct Imported: Sendable {
        public var exchanges: [RecordedExchange] = []
        public var skipped: [String] = []
    }

    /// Reads a HAR document. `progress` is told each entry's index as it is read.
    public static func read(_ bytes: [UInt8], progress: (Int, Int) -> Void = { _, _ in }) throws(Failure)
        -> Imported
    {
        let root: Value
        do {
            root = try Value.parse(bytes)
        } catch {
            throw Failure(description: "not JSON (line \(error.line ?? 0)): \(error.message)")
        }
        guard let log = root["log"], log.members != nil else { throw Failure(description: "no log object: not a HAR") }
        guard let entries = log["entries"]?.items else { throw Failure(description: "log.entries: expected a list") }
        var imported = Imported()
        for (index, entry) in entries.enumerated() {
            progress(index, entries.count)
            let path = "log.entries[\(index)]"
            let reader = EntryReader(entry: entry, path: path)
            switch try reader.exchange() {
            case .exchange(let exchange): imported.exchanges.append(exchange)
            case .skipped(let why): imported.skipped.append("\(path): \(why)")
            }
        }
        return imported
    }

    /// `text` as an `application/x-www-form-urlencoded` name or value (WHATWG URL §5.2): spaces
    /// as `+`, every byte but `*-._` and ASCII letters and digits percent-encoded.
    static func formEncoded(_ text: String) -> String {
        PercentEncoding.encoded(
            text, keeping: { PercentEncoding.isUnreserved($0) && $0 != 0x7E || $0 == 0x2A }, spaceAsPlus: true)
    }

    private struct EntryReader {
        let entry: Value
        let path: String

        enum Outcome {
            case exchange(RecordedExchange)
            case skipped(String)
        }

        func fail(_ key: String, _ message: String) -> Failure { Failure(description: "\(path).\(key): \(message)") }

        func object(_ value: Value?, _ key: String) throws(Failure) -> Value {
            guard let value, value.members != nil else { throw fail(key, "expected an object") }
            return value
        }

        func string(_ value: Value?, _ key: String) throws(Failure) -> String {
            guard let text = value?.string else { throw fail(key, "expected a string") }
            return text
        }

        func number(_ value: Value?, _ key: String) throws(Failure) -> Double? {
            guard let value, value.typeName != "null" else { return nil }
            guard let number = value.number else { throw fail(key, "expected a number") }
            return number.approximate
        }

        func headers(_ value: Value?, _ key: String) throws(Failure) -> [HTTPFields.Field] {
            guard let items = value?.items else { throw fail(key, "expected a list of {name, value}") }
            var fields: [HTTPFields.Field] = []
            for (index, item) in items.enumerated() {
                let name = try string(item["name"], "\(key)[\(index)].name")
                let text = try string(item["value"], "\(key)[\(index)].value")
                // HTTP/2 pseudo-header fields (`:authority`) are not header fields of the message.
                if name.hasPrefix(":") { continue }
                guard !name.isEmpty, name.utf8.allSatisfy(RequestParser.isTokenByte) else {
                    throw fail("\(key)[\(index)].name", "not a field name: \(name)")
                }
                guard !text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
                    throw fail("\(key)[\(index)].value", "a line break or NUL in a field value")
                }
                fields.append(HTTPFields.Field(name: name, value: text))
            }
            return fields
        }

        /// `text` with `encoding: base64`, or as UTF-8.
        func bytes(_ content: Value, _ key: String) throws(Failure) -> [UInt8]? {
            guard let text = content["text"] else { return nil }
            guard let string = text.string else { throw fail("\(key).text", "expected a string") }
            switch content["encoding"]?.string {
            case nil, "": return Array(string.utf8)
            case "base64":
                guard let decoded = Digest.base64Decoded(string) else { throw fail("\(key).text", "invalid base64") }
                return decoded
            case let other?: throw fail("\(key).encoding", "unknown encoding \(other)")
            }
        }

        func exchange() throws(Failure) -> Outcome {
            _ = try object(entry, "")
            let request = try object(entry["request"], "request")
            let response = try object(entry["response"], "response")
            let method = try string(request["method"], "request.method")
            guard !method.isEmpty, method.utf8.allSatisfy(RequestParser.isTokenByte) else {
                throw fail("request.method", "not a method: \(method)")
            }
            let url = try string(request["url"], "request.url")
            guard let target = TargetURL(url.split(separator: "#", maxSplits: 1).first.map(String.init) ?? url) else {
                // data:, blob:, chrome-extension: … entries are the browser's own.
                guard url.contains(":"), !url.hasPrefix("http") else { throw fail("request.url", "not a URL: \(url)") }
                return .skipped("not an http(s) URL: \(url.prefix(60))")
            }
            let requestHeaders = try headers(request["headers"], "request.headers")
            let status = Int(try number(response["status"], "response.status") ?? -1)
            guard status > 0 else { return .skipped("no response (status \(status): failed or blocked)") }
            guard (100...999).contains(status) else { throw fail("response.status", "not a status code") }
            guard status >= 200 else {
                return .skipped("status \(status): an upgrade or interim response is not replayed")
            }
            let started = try string(entry["startedDateTime"], "startedDateTime")
            guard let startedSeconds = HAR.parseTime(started) else {
                throw fail("startedDateTime", "not an ISO 8601 date-time: \(started)")
            }
            let time = try number(entry["time"], "time") ?? 0
            let wait = try entry["timings"].flatMap { timings throws(Failure) in
                try number(timings["wait"], "timings.wait")
            }
            var body: [UInt8] = []
            if let post = request["postData"], post.typeName != "null" {
                _ = try object(post, "request.postData")
                if let text = try bytes(post, "request.postData") {
                    body = text
                } else if let params = post["params"]?.items, !params.isEmpty {
                    // A form given as its params alone (no `text`): its body made again.
                    let type = post["mimeType"]?.string ?? ""
                    guard MediaType(type)?.essence.lowercased() == "application/x-www-form-urlencoded" else {
                        return .skipped("request.postData has params but no text, and is no urlencoded form (\(type))")
                    }
                    var pairs: [String] = []
                    for (index, param) in params.enumerated() {
                        let name = try string(param["name"], "request.postData.params[\(index)].name")
                        let value = try param["value"].map { value throws(Failure) in
                            try string(value, "request.postData.params[\(index)].value")
                        }
                        pairs.append(HAR.formEncoded(name) + (value.map { "=" + HAR.formEncoded($0) } ?? ""))
                    }
                    body = Array(pairs.joined(separator: "&").utf8)
                }
            }
            let content = try object(response["content"], "response.content")
            let responseBody = try bytes(content, "response.content")
            let size = try number(content["size"], "response.content.size").map { Int64(max(0, $0)) }
            var responseHeaders = try headers(response["headers"], "response.headers")
            // `content.text` is the decoded body; framing is Sluice's again when it is replayed.
            responseHeaders.removeAll {
                $0.hasName("content-encoding") || $0.hasName("content-length")
                    || !RecordedExchange.keepsResponseField($0.name)
            }
            let kept = responseBody ?? []
            // A body the HAR left out (size given, no text) is kept as cut: listed, not replayed.
            let total = responseBody == nil && !ReplayBook.isBodiless(status) ? max(size ?? 0, 0) : Int64(kept.count)
            let digest = body.withUnsafeBytes { Digest.hex(Digest.sha256($0)) }
            // HAR has no place for trailers: Sluice writes them in its own `_sluice` member.
            var trailers: [HTTPFields.Field] = []
            if let own = entry["_sluice"], own.typeName == "object", let listed = own["trailers"] {
                trailers = try headers(listed, "_sluice.trailers")
            }
            var exchange = RecordedExchange(
                started: startedSeconds, duration: max(0, time) / 1000, wait: wait.map { max(0, $0) / 1000 },
                method: method, url: target.description, requestHeaders: requestHeaders, requestBody: body,
                requestBodySize: Int64(body.count), requestBodyDigest: digest, status: status,
                reason: response["statusText"]?.string ?? "", responseHeaders: responseHeaders,
                responseBody: kept, responseBodySize: total, source: "har")
            exchange.responseTrailers = trailers
            return .exchange(exchange)
        }
    }

    // MARK: - Writing

    /// A HAR 1.2 document of `exchanges`, one entry each (bodies as text when they are UTF-8,
    /// otherwise base64; a coded body decoded, as browsers write them).
    public static func document(_ exchanges: [RecordedExchange], creator: String, version: String) -> String {
        var out = "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":" + Value.quoted(creator) + ",\"version\":"
        out += Value.quoted(version) + "},\"pages\":[],\"entries\":["
        for (index, exchange) in exchanges.enumerated() {
            if index > 0 { out += ",\n" }
            out += entry(exchange)
        }
        return out + "]}}\n"
    }

    static func entry(_ exchange: RecordedExchange) -> String {
        let headers = HTTPFields(exchange.responseHeaders.map { ($0.name, $0.value) })
        var body = exchange.responseBody
        if let coding = headers[.contentEncoding].flatMap(ContentCoding.init(token:)), exchange.responseComplete,
            let decoded = try? coding.decode(body, limit: 256 << 20)
        {
            body = decoded
        }
        let query = RequestURL(exchange.url).query.split(separator: "&").map { pair -> JSONValue in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return .object([
                ("name", .string(String(parts[0]))), ("value", .string(parts.count > 1 ? String(parts[1]) : "")),
            ])
        }
        var request: [(String, JSONValue)] = [
            ("method", .string(exchange.method)), ("url", .string(exchange.url)), ("httpVersion", .string("HTTP/1.1")),
            ("cookies", .array([])), ("headers", fields(exchange.requestHeaders)), ("queryString", .array(query)),
            ("headersSize", .number(-1)), ("bodySize", .number(Int(exchange.requestBodySize))),
        ]
        if exchange.requestBodySize > 0 {
            let type = HTTPFields(exchange.requestHeaders.map { ($0.name, $0.value) })["content-type"] ?? ""
            request.append(("postData", .object([("mimeType", .string(type))] + text(exchange.requestBody))))
        }
        let wait = (exchange.wait ?? 0) * 1000
        let total = exchange.duration * 1000
        let entry: JSONValue = .object([
            ("startedDateTime", .string(formatTime(exchange.started))), ("time", .double(rounded(total))),
            ("request", .object(request)),
            (
                "response",
                .object([
                    ("status", .number(exchange.status)), ("statusText", .string(exchange.reason)),
                    ("httpVersion", .string("HTTP/1.1")), ("cookies", .array([])),
                    ("headers", fields(exchange.responseHeaders)),
                    (
                        "content",
                        .object(
                            [
                                (
                                    "size",
                                    .number(exchange.responseComplete ? body.count : Int(exchange.responseBodySize))
                                ),
                                ("mimeType", .string(headers[.contentType] ?? "")),
                            ] + (exchange.responseComplete ? text(body) : [("comment", .string("body recorded cut"))]))
                    ),
                    ("redirectURL", .string(headers[.location] ?? "")), ("headersSize", .number(-1)),
                    ("bodySize", .number(Int(exchange.responseBodySize))),
                ])
            ),
            ("cache", .object([])),
            (
                "timings",
                .object([
                    ("send", .number(0)), ("wait", .double(rounded(wait))),
                    ("receive", .double(rounded(max(0, total - wait)))),
                ])
            ),
            (
                "_sluice",
                .object(
                    [
                        ("id", .number(Int(exchange.id))), ("source", .string(exchange.source)),
                        ("rule", .optional(exchange.rule)), ("complete", .bool(exchange.responseComplete)),
                    ] + (exchange.breakpoint.map { [("breakpoint", breakpointJSON($0))] } ?? [])
                        + (exchange.responseTrailers.isEmpty ? [] : [("trailers", fields(exchange.responseTrailers))]))
            ),
        ])
        return entry.json
    }

    /// A recording's breakpoint record as it is (JSON Sluice wrote), or as a string when the file
    /// holds something else in its place.
    private static func breakpointJSON(_ text: String) -> JSONValue {
        text.utf8.first == UInt8(ascii: "{") && (try? Value.parse(Array(text.utf8))) != nil ? .raw(text) : .string(text)
    }

    private static func rounded(_ milliseconds: Double) -> Double { (milliseconds * 1000).rounded() / 1000 }

    private static func fields(_ fields: [HTTPFields.Field]) -> JSONValue {
        .array(fields.map { .object([("name", .string($0.name)), ("value", .string($0.value))]) })
    }

    /// `text` (and `encoding: base64` for bytes that are not UTF-8 text).
    private static func text(_ bytes: [UInt8]) -> [(String, JSONValue)] {
        if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return [("text", .string(text))] }
        return [("text", .string(Digest.base64(bytes))), ("encoding", .string("base64"))]
    }

    // MARK: - Time

    /// `2026-11-26T09:01:46.123Z` for seconds since the epoch.
    static func formatTime(_ seconds: Double) -> String {
        var whole = time_t(seconds.rounded(.down))
        let millis = Int(((seconds - Double(whole)) * 1000).rounded(.down))
        var parts = tm()
        gmtime_r(&whole, &parts)
        func pad(_ number: Int, _ width: Int) -> String {
            let text = String(number)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2)).\(pad(millis, 3))Z"
    }

    /// Seconds since the epoch of an ISO 8601 date-time (`2026-11-26T09:01:46.123Z`,
    /// `…+01:00`, fractions of any length).
    static func parseTime(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var index = 0
        func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<(index + count)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
            index < bytes.count, bytes[index] == 0x54 || bytes[index] == 0x20
        else { return nil }
        index += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if expect(0x2E) {
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset: Int64 = 0
        if expect(0x5A) {
        } else if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D {
            let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = digits(2) else { return nil }
            _ = expect(0x3A)
            guard let minutes = digits(2) else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = HTTPDate.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }
}
