import ArgumentParser
import Codec
import Foundation
import Sluice

extension CacheCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the selected entries as HAR 1.2 (browser devtools, Charles).")
        @OptionGroup var common: Common
        @Option(help: "The HAR file to write (- for standard output).") var har: String
        @Option(help: "Only this host.") var host: String?
        @Option(help: "Only URLs matching this glob.") var url: String?
        @Option(help: "Only this status.") var status: Int?
        @Option(help: "At most this many entries.") var limit = 10_000

        func run() throws {
            var filter = CacheInspector.Filter()
            filter.host = host
            filter.url = url
            filter.status = status
            filter.order = .age
            filter.limit = limit
            let inspector = try common.inspector()
            let entries = try inspector.list(filter, now: CacheCommand.now)
            let toStandardOutput = har == "-"
            let output: FileHandle
            if toStandardOutput {
                output = FileHandle.standardOutput
            } else {
                guard FileManager.default.createFile(atPath: har, contents: nil),
                    let file = FileHandle(forWritingAtPath: har)
                else { throw CommandFailure.failed("cannot write \(har)") }
                output = file
            }
            defer { if !toStandardOutput { try? output.close() } }
            // One entry at a time: the file grows, memory does not.
            let creator = ["name": "Sluice", "version": SluiceVersion.current]
            let head = try JSONSerialization.data(withJSONObject: creator, options: [.sortedKeys])
            output.write(Data("{\"log\":{\"version\":\"1.2\",\"creator\":".utf8) + head + Data(",\"entries\":[".utf8))
            for (index, entry) in entries.enumerated() {
                let object = try CacheHAR.entry(entry, inspector: inspector)
                let data = try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                output.write((index > 0 ? Data(",\n".utf8) : Data("\n".utf8)) + data)
            }
            output.write(Data("\n]}}\n".utf8))
            // Standard output holds the HAR alone: what was written is said on standard error.
            let said =
                "wrote \(entries.count) entr\(entries.count == 1 ? "y" : "ies") to \(toStandardOutput ? "standard output" : har)"
            if toStandardOutput { return FileHandle.standardError.write(Data((said + "\n").utf8)) }
            if common.json { return CacheCommand.printJSON(["file": har, "entries": entries.count]) }
            print(said)
        }
    }
}

/// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) for stored responses.
enum CacheHAR {
    static func pairs(_ fields: [(String, String)]) -> [[String: String]] {
        fields.map { ["name": $0.0, "value": $0.1] }
    }

    static func entry(_ entry: CacheInspector.Entry, inspector: CacheInspector) throws -> [String: Any] {
        var stored: [UInt8] = []
        stored.reserveCapacity(Int(entry.size))
        try inspector.body(of: entry.id) { stored.append(contentsOf: $0) }
        var body = stored
        let encoding = entry.headers["content-encoding"]?.trimmingCharacters(in: .whitespaces).lowercased()
        if let encoding, let coding = ContentCoding(token: encoding),
            let decoded = try? coding.decode(stored, limit: 256 << 20)
        {
            body = decoded
        }
        let mimeType = entry.contentType ?? "application/octet-stream"
        var content: [String: Any] = [
            "size": body.count, "mimeType": mimeType, "compression": body.count - stored.count,
        ]
        if let text = String(validating: body, as: UTF8.self) {
            content["text"] = text
        } else {
            content["text"] = Data(body).base64EncodedString()
            content["encoding"] = "base64"
        }
        let url = URLComponents(string: entry.url)
        let query = (url?.queryItems ?? []).map { ($0.name, $0.value ?? "") }
        var requestHeaders = [
            ("Host", url?.host.map { host in url?.port.map { "\(host):\($0)" } ?? host } ?? entry.host)
        ]
        // The request header fields the response varied on, as stored with it.
        for line in entry.variant.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = String(line[line.index(after: colon)...])
            if !value.isEmpty { requestHeaders.append((String(line[..<colon]), value)) }
        }
        let wait = max(0, (entry.responseTime - entry.requestTime) * 1000)
        let started = ISO8601DateFormatter()
        started.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return [
            "startedDateTime": started.string(from: Date(timeIntervalSince1970: entry.requestTime)),
            "time": wait,
            "request": [
                "method": entry.method, "url": entry.url, "httpVersion": "HTTP/1.1", "cookies": [[String: String]](),
                "headers": pairs(requestHeaders), "queryString": pairs(query), "headersSize": -1, "bodySize": 0,
            ],
            "response": [
                "status": entry.status, "statusText": entry.reason, "httpVersion": "HTTP/1.1",
                "cookies": [[String: String]](), "headers": pairs(entry.headers.map { ($0.name, $0.value) }),
                "content": content, "redirectURL": entry.headers["location"] ?? "", "headersSize": -1,
                "bodySize": stored.count,
            ],
            "cache": [String: String](),
            "timings": ["send": 0, "wait": wait, "receive": 0],
            "comment": "Sluice cache entry \(entry.id)" + (entry.rule.map { ", rule \($0)" } ?? ""),
        ]
    }
}
