import Foundation
import Sluice
import SluiceTestKit
import Testing

/// `proxy_auth`: Basic proxy authentication (RFC 7617, RFC 9110 §11.7.1) with a real curl.
@Suite("Proxy authentication")
struct ProxyCredentialsTests {
    static func harness(password: String = "s3cret pass") throws -> (ProxyHarness, URL) {
        let directory = TestScratch.root.appendingPathComponent(
            "sluice-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("password")
        try (password + "\n").write(to: file, atomically: true, encoding: .utf8)
        var configuration = Configuration()
        configuration.proxyAuth = Configuration.ProxyAuth(user: "phone", passwordFile: file.path)
        return (try ProxyHarness(configuration: configuration), directory)
    }

    /// curl through the proxy: the status, and the `Proxy-Authenticate` it was asked with.
    static func curl(_ port: UInt16, _ url: String, user: String?) throws -> (status: String, challenge: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "-s", "-D", "-", "-o", "/dev/null", "-x", "http://127.0.0.1:\(port)"]
            + (user.map { ["--proxy-user", $0] } ?? []) + [url]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let head = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let status = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let challenge =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("proxy-authenticate:") }
            .map { String($0.dropFirst("proxy-authenticate:".count)).trimmingCharacters(in: .whitespaces) } ?? ""
        return (status, challenge)
    }

    @Test("The right user and password pass; a wrong or missing one gets 407 with a Basic challenge, never forwarded")
    func basic() throws {
        let origin = try OriginServer { _ in .text("hello") }
        defer { origin.stop() }
        let (proxy, directory) = try Self.harness()
        defer { try? FileManager.default.removeItem(at: directory) }
        let right = try Self.curl(proxy.port, origin.url("/a"), user: "phone:s3cret pass")
        #expect(right.status == "200")
        let wrong = try Self.curl(proxy.port, origin.url("/b"), user: "phone:guess")
        #expect(wrong.status == "407")
        #expect(wrong.challenge == #"Basic realm="sluice", charset="UTF-8""#)
        let missing = try Self.curl(proxy.port, origin.url("/c"), user: nil)
        #expect(missing.status == "407")
        #expect(origin.requests.map(\.target) == ["/a"], "only the authenticated request reached the origin")
        // The password is in no log line.
        #expect(!proxy.logLines.all.contains { $0.contains("s3cret") })
    }

    @Test("The event feed says Proxy-Authorization was sent and never serves its value")
    func credentialsNotServed() throws {
        let origin = try OriginServer { _ in .text("hello") }
        defer { origin.stop() }
        let (proxy, directory) = try Self.harness()
        defer { try? FileManager.default.removeItem(at: directory) }
        let admin = try proxy.startAdmin()
        // The page watches (the fields are kept for watched exchanges)
        let watcher = try RawClient(port: admin)
        try watcher.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try #require(try watcher.reader.readHead())
        // (Subscribed in the loop turn that wrote the head just read.)
        let token = Data("phone:s3cret pass".utf8).base64EncodedString()
        let client = try RawClient(port: proxy.port)
        let answer = try client.request(
            "GET \(origin.url("/a")) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nProxy-Authorization: Basic \(token)\r\n\r\n"
        )
        #expect(answer.status == 200)
        var shown: [[String]] = []
        for _ in 0..<20 where shown.isEmpty {
            let line = try watcher.reader.readEventLine()
            if line.hasPrefix("data: "),
                let event = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any],
                let fields = event["request_headers"] as? [[String]]
            {
                shown = fields
            }
        }
        let credentials = shown.first { $0.first?.lowercased() == "proxy-authorization" }
        #expect(credentials == ["Proxy-Authorization", "[redacted]"])
        #expect(!shown.flatMap { $0 }.contains { $0.contains(token) })
    }

    @Test("A CONNECT needs the credentials too; the 407 keeps the connection for the retry")
    func connect() throws {
        let (proxy, directory) = try Self.harness()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try RawClient(port: proxy.port)
        let refused = try client.request("CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n")
        #expect(refused.status == 407)
        #expect(refused.header("proxy-authenticate")?.hasPrefix("Basic") == true)
        let token = Data("phone:s3cret pass".utf8).base64EncodedString()
        let wrong = try client.request(
            "CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: Basic x\(token)\r\n\r\n")
        #expect(wrong.status == 407)
    }
}
