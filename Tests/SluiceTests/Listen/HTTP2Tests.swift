import Foundation
import SluiceTestKit
import TLS
import Testing

@testable import Sluice

/// HTTP/2 from clients on intercepted connections: curl `--http2` through the proxy (ALPN `h2`
/// inside the CONNECT), and hand-written frames for the abuse cases
/// (`Tests/Fixtures/http2/abuse.py`). The origin is HTTP/1.1 (libcurl's side is unchanged).
@Suite("HTTP/2 on intercepted connections")
struct HTTP2Tests {
    typealias Setup = InterceptionTests.Setup

    /// curl through the proxy with `--http2`; `-w` output after the body.
    static func curl(_ arguments: [String], proxy: UInt16, cacert: String, input: Data? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "-s", "--http2", "--max-time", "20", "-x", "http://127.0.0.1:\(proxy)", "--cacert", cacert]
            + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let stdin = Pipe()
        if input != nil { process.standardInput = stdin }
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(
        "Each stream is an ordinary exchange: stripped, validated, cached, a POST with and without a length, a large body"
    )
    func exchanges() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let first = try Self.curl(
            ["-D", "-", "-w", "|%{http_version}", origin.url("/json")], proxy: proxy.port, cacert: setup.caCert)
        #expect(first.contains("HTTP/2 200"), "\(first)")
        #expect(first.contains("cache-status: Sluice; fwd=uri-miss; stored"))
        #expect(first.hasSuffix(#"{"a":1,"c":[null,{}]}|2"#), "\(first)")
        let second = try Self.curl(["-D", "-", origin.url("/json")], proxy: proxy.port, cacert: setup.caCert)
        #expect(second.contains("cache-status: Sluice; hit"), "\(second)")
        #expect(!second.lowercased().contains("connection:") && !second.lowercased().contains("transfer-encoding"))
        // A rule that accepts only 2xx: the origin's 500 becomes the problem, on the stream.
        let rejected = try Self.curl(
            ["-w", "|%{http_code}|%{http_version}", origin.url("/html500")], proxy: proxy.port, cacert: setup.caCert)
        #expect(rejected.hasSuffix("|502|2") && rejected.contains(#""status":502"#), "\(rejected)")
        let posted = try Self.curl(
            ["--data-binary", "hello over h2", "-w", "|%{http_version}", origin.url("/echo")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(posted == "hello over h2|2", "\(posted)")
        // From stdin: no length, DATA until END_STREAM (chunked upstream).
        let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let streamed = try Self.curl(
            [
                "-T", "-", "-X", "POST", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{http_version}",
                origin.url("/echo"),
            ],
            proxy: proxy.port, cacert: setup.caCert, input: body)
        #expect(streamed == "200 300000 2", "\(streamed)")
        let big = try Self.curl(
            ["-o", "/dev/null", "-w", "%{http_code} %{size_download}", origin.url("/big?n=\(8 << 20)")],
            proxy: proxy.port,
            cacert: setup.caCert)
        #expect(big == "200 \(8 << 20)", "\(big)")
        #expect(proxy.onLoop { $0.stats.http2Streams } == 6)
        #expect(proxy.waitUntil { proxy.logLines.all.contains { $0.contains("\"POST \(origin.url("/echo"))\" 200") } })
    }

    @Test(
        "Sluice's own answer before the request body arrived reaches the client whole; the rest of the body is dropped")
    func ownAnswerBeforeTheBody() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let rule = """
              - name: mock
                match: { host: "localhost", path: "/mock" }
                respond: { status: 200, body: "mocked" }
            """
        let proxy = try ProxyHarness(configuration: setup.configuration(extraRule: rule, connectPort: origin.port))
        // curl sends the HEADERS, then its DATA after the window opens: the answer is already on its way.
        for _ in 0..<3 {
            let answered = try Self.curl(
                ["--data-binary", "abc", "-w", "|%{http_code}|%{http_version}", origin.url("/mock")], proxy: proxy.port,
                cacert: setup.caCert)
            #expect(answered == "mocked|200|2", "\(answered)")
        }
    }

    @Test(
        "Expect: 100-continue on a stream: the 100 is an interim HEADERS frame, then the body goes and the answer comes"
    )
    func expectContinue() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        // curl waits up to 15 s for the 100 before it sends the body anyway: the 100 came when
        // the whole exchange took less than that.
        let answer = try Self.curl(
            [
                "-D", "-", "-H", "Expect: 100-continue", "--expect100-timeout", "15", "--data-binary", "hello over h2",
                "-w", "|%{time_total}", origin.url("/echo"),
            ], proxy: proxy.port, cacert: setup.caCert)
        #expect(answer.contains("HTTP/2 100"), "\(answer)")
        #expect(answer.contains("HTTP/2 200") && answer.contains("hello over h2|"), "\(answer)")
        let seconds = answer.split(separator: "|").last.flatMap { Double($0) } ?? 99
        #expect(seconds < 10, "the client waited for its own timeout: \(seconds) s")
    }

    @Test("limits.max_request_body holds on HTTP/2 streams: a body over it is a 413, with a length or without")
    func requestBodyLimit() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.limits.maxRequestBody = 1000
        let proxy = try ProxyHarness(configuration: configuration)
        let body = String(repeating: "b", count: 5_000)
        let declared = try Self.curl(
            ["--data-binary", body, "-o", "/dev/null", "-w", "%{http_code}", origin.url("/echo")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(declared == "413", "\(declared)")
        let streamed = try Self.curl(
            ["-T", "-", "-X", "POST", "-o", "/dev/null", "-w", "%{http_code}", origin.url("/echo")], proxy: proxy.port,
            cacert: setup.caCert, input: Data(body.utf8))
        #expect(streamed == "413", "\(streamed)")
        let small = try Self.curl(
            ["--data-binary", "small", "-w", "|%{http_code}", origin.url("/echo")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(small == "small|200", "\(small)")
    }

    @Test(
        "Cookie crumbs (one field per cookie) reach the HTTP/1.1 origin as one Cookie line joined with \"; \"; Via names HTTP/2; TE goes with Connection: TE"
    )
    func cookieCrumbs() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let lines = try Self.curl(
            ["-H", "Cookie: a=1", "-H", "Cookie: b=2", origin.url("/cookies")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(lines == "|a=1; b=2|", "\(lines)")
        // The protocol the request came in (RFC 9110 §7.6.3), not the one it goes on in.
        let via = try Self.curl([origin.url("/via")], proxy: proxy.port, cacert: setup.caCert)
        #expect(via == "|2 sluice|", "\(via)")
        // Its `te: trailers` is asked for in Sluice's name, named in Connection (RFC 9110 §10.1.4).
        let te = try Self.curl(["-H", "te: trailers", origin.url("/te")], proxy: proxy.port, cacert: setup.caCert)
        #expect(te == "|trailers|TE|", "\(te)")
    }

    @Test("100 streams at once on one connection, with a slow reader of a large body among them")
    func concurrent() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        _ = try Self.curl(["-o", "/dev/null", origin.url("/json")], proxy: proxy.port, cacert: setup.caCert)
        let urls = (0..<100).map { _ in origin.url("/json") } + [origin.url("/big?n=\(16 << 20)")]
        let output = try Self.curl(
            [
                "-Z", "--parallel-max", "101", "--limit-rate", "20M", "-w",
                "%{http_version} %{http_code} %{size_download}\\n",
            ]
                + urls.flatMap { ["-o", "/dev/null", $0] },
            proxy: proxy.port, cacert: setup.caCert)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 101)
        // The stripped JSON, 100 times (the rule strips nulls on every stream).
        #expect(lines.filter { $0 == "2 200 21" }.count == 100, "\(output)")
        #expect(lines.contains("2 200 \(16 << 20)"))
        // Multiplexed: 101 streams on one or two connections (curl may open a second before it
        // learns the first speaks HTTP/2), plus the first curl's.
        let (connections, streams) = proxy.onLoop { ($0.stats.http2Connections, $0.stats.http2Streams) }
        #expect(streams == 102 && connections <= 3, "\(streams) streams on \(connections) connections")
    }

    /// Runs `abuse.py MODE` against the proxy; its JSON.
    static func abuse(_ mode: String, proxy: UInt16, port: UInt16, ca: String) throws -> [String: Any] {
        try TestVenv.run("http2/abuse.py", [mode, String(proxy), "localhost", String(port), ca]).json
    }

    @Test("Rapid reset, a CONTINUATION flood and an HPACK bomb end with bounded work; the next client is served")
    func abuse() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let rapid = try Self.abuse("rapid-reset", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(rapid["goaway"] as? Int == 11 || rapid["closed"] as? Bool == true, "\(rapid)")
        #expect((rapid["sent"] as? Int ?? .max) < 20_000, "the connection ended long before the flood did: \(rapid)")
        #expect(proxy.onLoop { $0.stats.http2Streams } < 2_000, "streams that became exchanges")
        let flood = try Self.abuse("continuation", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(flood["closed"] as? Bool == true || flood["goaway"] != nil, "\(flood)")
        #expect((flood["sent"] as? Int ?? .max) < 100_000, "\(flood)")
        let bomb = try Self.abuse("hpack-bomb", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(bomb["resets"] as? Int == 1 || bomb["goaway"] != nil, "\(bomb)")
        if bomb["resets"] as? Int == 1 { #expect(bomb["reset_code"] as? Int == 11, "ENHANCE_YOUR_CALM: \(bomb)") }
        #expect(proxy.onLoop { $0.stats.http2Refused } + proxy.onLoop { $0.stats.http2RapidResets } >= 1)
        // A stream that ends short of its content-length is malformed (RFC 9113 §8.1.1): reset
        // at once (a stream error), not left waiting for bytes that will not come.
        let short = try Self.abuse("short-body", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        let ended = (short["responses"] as? Int ?? 0) + (short["resets"] as? Int ?? 0)
        #expect(ended == 1 && (short["seconds"] as? Double ?? 99) < 2.5, "\(short)")
        let after = try Self.curl(
            ["-w", "|%{http_version}", origin.url("/nostore")], proxy: proxy.port, cacert: setup.caCert)
        #expect(after == "fresh every time|2", "\(after)")
    }

    @Test(
        "A connection error with a stream in flight: GOAWAY, then the connection closes; a host that contradicts :authority is refused; 3 000 small response fields arrive"
    )
    func connectionErrorsAndHeads() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        // (Before, the connection stayed open after its GOAWAY while the stream ran, and for
        // ever once the idle timeout had stopped its reading: a slot and a descriptor each.)
        let error = try Self.abuse("error-in-flight", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(error["goaway"] as? Int == 1 && error["closed"] as? Bool == true, "\(error)")
        #expect(proxy.waitUntil { proxy.onLoop { $0.openConnections } == 0 }, "the slot is given back")
        let mismatch = try Self.abuse("host-mismatch", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(mismatch["responses"] as? Int == 1 || mismatch["resets"] as? Int == 1, "\(mismatch)")
        #expect(!(mismatch["body"] as? String ?? "").contains("fresh every time"), "\(mismatch)")
        #expect(origin.requests == 1, "only the slow request reached the origin")
        // (nghttp2's 64 KiB default bound on a header block refused this head, and the stream
        // was left open with nothing sent.)
        let many = try Self.abuse("many-fields", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(many["responses"] as? Int == 1 && many["body"] as? String == "many", "\(many)")
    }

    @Test("A quiet connection with a stream running is not idle: no GOAWAY, it keeps reading and serves the next")
    func quietIsNotIdle() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.timeouts.clientIdle = 400
        let proxy = try ProxyHarness(configuration: configuration)
        // A slow answer (about 1.2 s, three idle timeouts long), then a second request on the
        // same connection (curl reuses it unless a GOAWAY said otherwise).
        let output = try Self.curl(
            [
                "-w", "%{http_code} %{size_download}\\n", "-o", "/dev/null", origin.url("/big?n=262144&delay_ms=300"),
                "-o", "/dev/null", origin.url("/nostore"),
            ], proxy: proxy.port, cacert: setup.caCert)
        #expect(output == "200 262144\n200 16\n", "\(output)")
        #expect(proxy.onLoop { $0.stats.http2Connections } == 1, "one connection for both")
    }

    @Test(
        "A :scheme other than https on the intercepted TLS connection is refused, never answered with the https resource"
    )
    func schemesRefused() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let result = try Self.abuse("schemes", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(result["responses"] as? Int == 2, "both answered (421, 400): \(result)")
        #expect(origin.requests == 0, "nothing reached the origin")
        #expect(proxy.logLines.all.contains { $0.contains("421") }, "\(proxy.logLines.all)")
    }

    @Test(
        "timeouts.client_body holds per stream: a request body that stops coming ends it, so does a response nobody reads"
    )
    func stalledStreams() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.timeouts.clientBody = 1000
        let proxy = try ProxyHarness(configuration: configuration)
        // (Without the per-stream timeout, each waited for upstream_response, or for ever.)
        let body = try Self.abuse("stalled-body", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        // (The request went upstream as it came: the stream is reset, and the log says why.)
        let ended = (body["responses"] as? Int ?? 0) + (body["resets"] as? Int ?? 0)
        #expect(ended == 1 && (body["seconds"] as? Double ?? 99) < 5, "\(body)")
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("/echo\"") && $0.contains("request-timeout") }
            },
            "\(proxy.logLines.all)")
        let reader = try Self.abuse("no-read", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(reader["resets"] as? Int == 1 && (reader["seconds"] as? Double ?? 99) < 5, "\(reader)")
    }

    @Test(
        "A stream whose origin reads slowly holds back its own upload only, never another stream's (the connection window)"
    )
    func stalledUploadLeavesNeighbours() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let result = try Self.abuse("neighbour", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        // Stream 1 sent what its windows let it (more than the connection window of 256 KiB),
        // its origin reading nothing for 8 s; stream 3's 100 KiB were answered meanwhile.
        #expect((result["stalled_sent"] as? Int ?? 0) > 256 * 1024, "\(result)")
        let took = try #require(result["neighbour_ms"] as? Int, "\(result)")
        #expect(took < 4000, "\(result)")
    }

    @Test("A header list over limits.max_header_bytes is a 431 problem, as on HTTP/1.1, not a reset")
    func headerListTooLarge() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        // (curl keeps to the SETTINGS_MAX_HEADER_LIST_SIZE Sluice announces: frames by hand.)
        let result = try Self.abuse("big-head", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        #expect(result["responses"] as? Int == 1 && result["resets"] as? Int == 0, "\(result)")
        #expect((result["body"] as? String ?? "").contains("headers-too-large"), "\(result)")
        #expect(origin.requests == 0)
    }

    @Test("Request trailers that come with the head and body in one read are not merged into the head sent upstream")
    func requestTrailersNotMerged() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let result = try Self.abuse("trailers", proxy: proxy.port, port: origin.port, ca: setup.caCert)
        let body = result["body"] as? String ?? ""
        #expect(result["responses"] as? Int == 1 && body.hasSuffix("|hello"), "\(result)")
        // The head the origin got: no trailer field in it, and the body framed by its own length.
        #expect(!body.contains("x-trailer") && !body.contains("authorization"), "\(body)")
        #expect(body.contains("|content-length|") && body.contains("|content-type|"), "\(body)")
    }

    @Test("A shutdown sends GOAWAY and lets the running stream finish; the proxy then stops")
    func shutdown() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let proxy = try ProxyHarness(configuration: setup.configuration(connectPort: origin.port))
        let (status, output) = try runProgram(
            "curl",
            [
                "-s", "--http2", "--max-time", "20", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", setup.caCert,
                "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{http_version}",
                origin.url("/short?n=200000&cut=70000"),
            ], dropErrors: true)
        #expect(status != 0, "curl saw an error, not a whole answer: \(output)")
        let fields = output.split(separator: " ")
        #expect(fields.first == "200" && fields.last == "2", "\(output)")
        #expect(fields.count == 3 && Int(fields[1]).map { $0 < 200_000 } == true, "\(output)")
        // The connection goes on: the next stream is served whole.
        let next = try Self.curl(
            ["-o", "/dev/null", "-w", "%{http_code} %{size_download}", origin.url("/big?n=1000")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(next == "200 1000", "\(next)")
    }

    @Test(
        "An injected reset on an HTTP/2 stream sends the head and after_bytes of the body first, then resets the stream"
    )
    func injectedReset() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        let configuration = try setup.configuration(
            extraRule: """
                  - name: cut
                    match: { host: "localhost", path: "/big" }
                    faults: { reset: { rate: 1, after_bytes: 1KiB } }
                    tls: { ca_file: \(setup.originCAPath) }
                """, connectPort: origin.port)
        let proxy = try ProxyHarness(configuration: configuration)
        let body = try Self.curl([origin.url("/big?n=100000")], proxy: proxy.port, cacert: setup.caCert)
        #expect(body.utf8.count == 1024, "\(body.utf8.count) bytes")
    }

    @Test("tls.http2: false offers only http/1.1")
    func off() throws {
        let setup = try Setup()
        let origin = try HTTPSOrigin(authority: setup.originCA)
        defer { origin.stop() }
        var configuration = try setup.configuration(connectPort: origin.port)
        configuration.tls.http2 = false
        let proxy = try ProxyHarness(configuration: configuration)
        let version = try Self.curl(
            ["-o", "/dev/null", "-w", "%{http_version}", origin.url("/nostore")], proxy: proxy.port,
            cacert: setup.caCert)
        #expect(version == "1.1")
    }
}

/// gRPC end to end through an intercepted connection: grpcio's server (TLS, HTTP/2) and client
/// (through the proxy with `grpc_proxy`) from PyPI, in `.build/test-venv`.
@Suite(
    "gRPC through interception",
    .enabled(if: TestVenv.isAvailable, "needs .build/test-venv: scripts/setup.sh --tests"))
struct GRPCTests {
    @Test("Unary, server-streaming (each message as it comes) and an error status pass, trailers included")
    func calls() throws {
        let setup = try WebSocketTests.Setup()
        let (server, port) = try TestVenv.start("grpc/grpc_test.py", ["server", setup.certificate, setup.key])
        defer { TestVenv.stop(server) }
        let proxy = try ProxyHarness(configuration: setup.configuration(port: port))
        let (status, json) = try TestVenv.run(
            "grpc/grpc_test.py", ["client", String(proxy.port), "localhost:\(port)", setup.caCert])
        #expect(status == 0, "\(json)")

        #expect(json["unary"] as? String == "echo:hello grpc")
        #expect(json["stream"] as? [String] == (0..<5).map { "message \($0)" })
        // The server sends one message every 20 ms: they arrive spread out, not all at the end.
        let times = json["stream_times"] as? [Double] ?? []
        #expect(times.count == 5 && times[4] - times[0] >= 0.06, "\(times)")
        #expect(json["fail"] as? [String] == ["NOT_FOUND", "no such thing"])
        // A trailer field over 16 KiB (within limits.max_header_bytes) comes back whole.
        #expect(json["trailer"] as? Int == 20000)
        // 250 expired deadlines (streams cancelled after 100 ms) are no rapid reset.
        #expect(json["deadlines"] as? [String: Int] == ["DEADLINE_EXCEEDED": 250], "\(json)")
        #expect(json["beside"] as? Int == 30, "\(json)")
        #expect(proxy.onLoop { $0.stats.http2RapidResets } == 0)
        #expect(proxy.onLoop { $0.stats.http2Connections } == 1)
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("\"POST https://localhost:\(port)/test.Echo/Stream\" 200") }
            })
    }

    @Test(
        "A client stream quiet longer than upstream_response is no origin slow to answer; Sluice's own refusals are gRPC statuses"
    )
    func quietStreamsAndStatuses() throws {
        let setup = try WebSocketTests.Setup()
        let (server, port) = try TestVenv.start("grpc/grpc_test.py", ["server", setup.certificate, setup.key])
        defer { TestVenv.stop(server) }
        var configuration = try setup.configuration(port: port)
        configuration.timeouts.upstreamResponse = 1000
        configuration.limits.maxRequestBody = 2 << 20
        let proxy = try ProxyHarness(configuration: configuration)
        let arguments = [String(proxy.port), "localhost:\(port)", setup.caCert]
        // The stream sends a message, is quiet 2.5 s (the head wait is 1 s), then sends another.
        let (quietStatus, quiet) = try TestVenv.run("grpc/grpc_test.py", ["quiet"] + arguments + ["2.5"])
        #expect(quietStatus == 0 && quiet["answer"] as? String == "1,2", "\(quiet)")
        // Over limits.max_request_body: a gRPC status saying so, not an HTTP 413 the client
        // reports as UNKNOWN without a word.
        let (_, over) = try TestVenv.run("grpc/grpc_test.py", ["upload"] + arguments + ["4"])
        let status = over["status"] as? [String] ?? []
        #expect(status.first == "RESOURCE_EXHAUSTED", "\(over)")
        #expect(status.last?.contains("max_request_body") == true, "\(over)")
    }

    @Test(
        "Calls recorded (statuses and trailers kept) are replayed with the server gone: same messages, statuses, trailers"
    )
    func recordedAndReplayed() throws {
        let setup = try WebSocketTests.Setup()
        let file = try RecordReplayTests.temporaryPath("grpc.sluicerec")
        let (server, port) = try TestVenv.start("grpc/grpc_test.py", ["server", setup.certificate, setup.key])
        var configuration = try setup.configuration(port: port)
        configuration.record.file = file
        let live: [String: Any]
        do {
            let proxy = try ProxyHarness(configuration: configuration)
            let (status, json) = try TestVenv.run(
                "grpc/grpc_test.py", ["basic", String(proxy.port), "localhost:\(port)", setup.caCert])
            #expect(status == 0, "\(json)")
            live = json
            proxy.shutdown()
        }
        TestVenv.stop(server)
        #expect(live["unary"] as? String == "echo:hello")
        #expect(live["stream"] as? [String] == ["message 0", "message 1", "message 2"])
        #expect(live["fail"] as? [String] == ["NOT_FOUND", "no such thing"])
        #expect(live["trailer"] as? String == String(repeating: "t", count: 100))
        let recorded = try Recording.open(file).exchanges()
        #expect(recorded.count == 4)
        // The failing call is Trailers-Only: its status is in the head.
        #expect(
            recorded.map { ($0.responseTrailers + $0.responseHeaders).first { $0.hasName("grpc-status") }?.value } == [
                "0", "0", "5", "0",
            ], "\(recorded.map(\.responseTrailers))")
        #expect(recorded.map { $0.responseTrailers.isEmpty } == [false, false, true, false])
        // A HAR export keeps them in `_sluice.trailers`, and its import reads them back.
        let har = HAR.document(recorded, creator: "test", version: "1")
        let imported = try HAR.read(Array(har.utf8)).exchanges
        #expect(imported.map(\.responseTrailers) == recorded.map(\.responseTrailers))

        configuration.record.file = nil
        configuration.replay.file = file
        let proxy = try ProxyHarness(configuration: configuration)
        let (status, replayed) = try TestVenv.run(
            "grpc/grpc_test.py", ["basic", String(proxy.port), "localhost:\(port)", setup.caCert])
        #expect(status == 0, "\(replayed)")
        for key in ["unary", "stream", "fail", "trailer"] {
            #expect(
                (replayed[key].map { "\($0)" } ?? "-") == (live[key].map { "\($0)" } ?? "+"),
                "\(key): \(replayed)")
        }
    }

    /// The breakpoint holds 16 MiB, then lets it go at once and the call goes on: those bytes
    /// went out one write per frame from the client (32 s), and the origin gave up meanwhile.
    @Test("A stream larger than max_transform_body at a response breakpoint is not paused and arrives whole")
    func bigStreamAtBreakpoint() throws {
        let setup = try WebSocketTests.Setup()
        let (server, port) = try TestVenv.start("grpc/grpc_test.py", ["server", setup.certificate, setup.key])
        defer { TestVenv.stop(server) }
        var configuration = try setup.configuration(port: port)
        configuration.limits.maxTransformBody = 16 << 20
        configuration.breakpoints.points = [
            try Breakpoint.parse(["stage": "response", "match": ["path": "/test.Echo/Big"]], name: "big").get()
        ]
        let proxy = try ProxyHarness(configuration: configuration)
        let (status, json) = try TestVenv.run(
            "grpc/grpc_test.py", ["big", String(proxy.port), "localhost:\(port)", setup.caCert, "24"])
        #expect(status == 0, "\(json)")
        #expect(json["status"] as? String == "OK", "\(json)")
        #expect(json["messages"] as? Int == 24 && json["bytes"] as? Int == 24 << 20, "\(json)")
        #expect(
            proxy.waitUntil {
                proxy.logLines.all.contains { $0.contains("larger than max_transform_body") }
            })
    }
}
