import Foundation
import TLS

/// A real HTTPS origin for tests: Python's `http.server` behind its `ssl` module, on 127.0.0.1
/// port 0, with a certificate the test chose (issued at test time by a test CA). It serves a few
/// fixed paths and counts the requests it answered.
///
/// | path | answer |
/// |---|---|
/// | `/json` | `{"a":1,"b":null,"c":[null,{"d":null}]}`, `application/json`, `max-age=60` |
/// | `/html500` | a `text/html` 500 |
/// | `/nostore` | `text/plain`, `no-store` |
/// | `POST /anything` | the request body back (`Content-Length` or chunked), `no-store` |
/// | `POST /slowread` | the same, after reading nothing for 8 s |
/// | `/big?n=BYTES` | BYTES of printable ASCII (byte `i` of each 64 KiB piece is `33 + i % 90`), `no-store` or `&cc=`, with an optional `&delay_ms=` per piece |
public final class HTTPSOrigin: @unchecked Sendable {
    /// The port it listens on.
    public let port: UInt16
    /// The PEM files of its certificate and key, and of the CA that issued them.
    public let directory: URL
    private let process: Process
    private let output: Pipe

    /// Starts an origin whose certificate `authority` issues for `name` (see
    /// ``CertificateAuthority/issueServerCertificate(for:validFrom:validDays:selfSigned:)``).
    public init(
        authority: CertificateAuthority, name: String = "localhost", validFrom: Int = -1, validDays: Int = 30,
        selfSigned: Bool = false, clientCA: String? = nil
    ) throws {
        directory = TestScratch.root.appendingPathComponent("https-origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let issued = try authority.issueServerCertificate(
            for: name, validFrom: validFrom, validDays: validDays, selfSigned: selfSigned)
        try issued.certificate.write(
            to: directory.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        try issued.key.write(to: directory.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)
        try HTTPSOrigin.script.write(
            to: directory.appendingPathComponent("origin.py"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // With `clientCA`: every client must show a certificate that CA issued (mutual TLS).
        process.arguments =
            ["python3", directory.appendingPathComponent("origin.py").path, directory.path]
            + (clientCA.map { [$0] } ?? [])
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port.
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        guard let port = UInt16(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadCorruptFile)
        }
        self.port = port
    }

    deinit { stop() }

    /// `https://localhost:PORT/path` (or the name given).
    /// What `/big?n=count` sends.
    public static func bigBody(count: Int) -> [UInt8] { (0..<count).map { UInt8(33 + ($0 % 65536) % 90) } }

    public func url(_ path: String, host: String = "localhost") -> String { "https://\(host):\(port)\(path)" }

    /// Requests answered so far.
    public var requests: Int {
        (try? String(contentsOf: directory.appendingPathComponent("count"), encoding: .utf8)).flatMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        } ?? 0
    }

    public func stop() {
        // SIGKILL: the test runner's process may ignore SIGTERM, and children inherit that.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static let script = """
        import http.server, ssl, sys, os, time, urllib.parse, socket
        d = sys.argv[1]
        count = [0]
        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def send(self, status, ctype, body, cc):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", cc)
                self.end_headers()
                if self.command != "HEAD": self.wfile.write(body)
            def do_GET(self):
                count[0] += 1
                open(os.path.join(d, "count"), "w").write(str(count[0]))
                u = urllib.parse.urlparse(self.path)
                q = urllib.parse.parse_qs(u.query)
                if u.path == "/json":
                    self.send(200, "application/json", b'{"a":1,"b":null,"c":[null,{"d":null}]}', "max-age=60")
                elif u.path == "/cookies":
                    # Every Cookie line received, between bars.
                    lines = self.headers.get_all("Cookie") or []
                    self.send(200, "text/plain", ("|" + "|".join(lines) + "|").encode(), "no-store")
                elif u.path == "/via":
                    # Every Via line received, between bars.
                    lines = self.headers.get_all("Via") or []
                    self.send(200, "text/plain", ("|" + "|".join(lines) + "|").encode(), "no-store")
                elif u.path == "/te":
                    # The TE and Connection lines received.
                    te = ",".join(self.headers.get_all("TE") or [])
                    connection = ",".join(self.headers.get_all("Connection") or [])
                    self.send(200, "text/plain", ("|" + te + "|" + connection + "|").encode(), "no-store")
                elif u.path == "/html500":
                    self.send(500, "text/html", b"<h1>oops</h1>", "no-store")
                elif u.path == "/nostore":
                    self.send(200, "text/plain", b"fresh every time", "no-store")
                elif u.path == "/big":
                    n = int(q.get("n", ["0"])[0]); delay = int(q.get("delay_ms", ["0"])[0]) / 1000.0
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(n))
                    self.send_header("Cache-Control", q.get("cc", ["no-store"])[0])
                    self.end_headers()
                    piece = bytes(33 + i % 90 for i in range(65536))
                    while n > 0:
                        k = min(n, len(piece)); self.wfile.write(piece[:k]); n -= k
                        if delay: time.sleep(delay)
                elif u.path == "/many":
                    # n small fields (about 20 bytes each): many fields under max_header_bytes.
                    n = int(q.get("n", ["0"])[0])
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    for i in range(n):
                        self.send_header("X-M-%d" % i, "v" * 10)
                    self.send_header("Content-Length", "4")
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    self.wfile.write(b"many")
                elif u.path == "/wide":
                    # A head of n padded fields: larger than one TLS record (16 KiB) when n > 16.
                    n = int(q.get("n", ["0"])[0])
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    for i in range(n):
                        self.send_header("X-Pad-%d" % i, "p" * 1000)
                    self.send_header("Content-Length", "4")
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    self.wfile.write(b"wide")
                elif u.path == "/short":
                    # Announces n bytes, sends `cut` of them, and closes: a truncated answer.
                    n = int(q.get("n", ["0"])[0]); cut = int(q.get("cut", ["0"])[0])
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(n))
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    self.wfile.write(b"x" * cut); self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self.send(404, "text/plain", b"not found", "no-store")
            do_HEAD = do_GET
            def do_POST(self):
                if self.path == "/slowread":
                    time.sleep(8)  # reads nothing for a while: its client's upload stalls
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\\r\\n", b""): pass
                            break
                        data += self.rfile.read(size); self.rfile.readline()
                else:
                    data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/heads":
                    # The field names received, lower-cased, between bars; then the body.
                    names = "|".join(k.lower() for k in self.headers.keys())
                    data = ("|" + names + "|").encode() + data
                self.send(200, "application/octet-stream", data, "no-store")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(d, "cert.pem"), os.path.join(d, "key.pem"))
        if len(sys.argv) > 2:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
}
