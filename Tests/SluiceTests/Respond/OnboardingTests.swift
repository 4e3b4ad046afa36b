import EventIO
import Foundation
import QRCode
import SluiceTestKit
import TLS
import Testing

@testable import Sluice

/// Whether a program is on PATH.
func hasTool(_ name: String) -> Bool {
    ((ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")).contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
    }
}

@Suite("The onboarding page")
struct OnboardingTests {
    /// A folder where the proxy makes its CA.
    final class Setup: @unchecked Sendable {
        let directory: URL
        var caCert: String { directory.appendingPathComponent("sluice-ca.pem").path }

        init() throws {
            directory = TestScratch.root.appendingPathComponent("onboard-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func configuration(extra: String = "") throws -> Configuration {
            try ConfigLoader.load(
                yaml: """
                    tls:
                      intercept: ["localhost"]
                      ca_cert: \(caCert)
                      ca_key: \(directory.path)/sluice-ca.key
                    \(extra)
                    """)
        }
    }

    @Test("Its paths are GET or HEAD of /, the three certificate forms; a query is ignored")
    func resources() {
        #expect(Onboarding.resource(method: "GET", path: "/") == .page)
        #expect(Onboarding.resource(method: "HEAD", path: "/sluice-ca.crt?x=1") == .der)
        #expect(Onboarding.resource(method: "GET", path: "/sluice-ca.mobileconfig") == .profile)
        #expect(Onboarding.resource(method: "POST", path: "/") == nil)
        #expect(Onboarding.resource(method: "GET", path: "/index.html") == nil)
        #expect(Onboarding().answer(path: "/sluice-ca.pem")?.status == 404, "no CA: nothing to download")
    }

    @Test("The page names first the address the device asked, and the real port in the emulator steps")
    func addressAsked() {
        let onboarding = Onboarding(proxyAddresses: ["198.51.100.7:33180", "192.0.2.2:33180"])
        let page = { (host: String?) in
            String(decoding: onboarding.answer(path: "/", reachedAt: host)?.body ?? [], as: UTF8.self)
        }
        #expect(page("192.0.2.2:33180").contains("proxy to <b>192.0.2.2:33180</b> (or <b>198.51.100.7:33180</b>)"))
        #expect(page(nil).contains("proxy to <b>198.51.100.7:33180</b> (or <b>192.0.2.2:33180</b>)"))
        #expect(page("sluice.internal").contains("proxy to <b>198.51.100.7:33180</b>"))
        // An emulator's host side reaches it on loopback, its guest side on 10.0.2.2.
        #expect(page(nil).contains("emulator -http-proxy http://127.0.0.1:33180") && !page(nil).contains(":PORT"))
        #expect(page(nil).contains("http_proxy 10.0.2.2:33180"))
        // A proxy on loopback only still names its port.
        let local = Onboarding(port: 8080)
        let localPage = String(decoding: local.answer(path: "/")?.body ?? [], as: UTF8.self)
        #expect(localPage.contains("http://127.0.0.1:8080") && !localPage.contains("PORT"), "\(localPage)")
    }

    @Test(
        "Through the proxy: the page, the PEM, the DER (read by OpenSSL) and a profile plistlib reads, holding the CA")
    func throughTheProxy() throws {
        let setup = try Setup()
        let proxy = try ProxyHarness(configuration: setup.configuration())
        let client = try RawClient(port: proxy.port)
        let page = try client.request(RawClient.get("http://sluice.internal/"))
        #expect(page.status == 200)
        #expect(page.header("content-type") == "text/html; charset=utf-8")
        #expect(page.header("content-security-policy")?.contains("default-src 'none'") == true)
        #expect(page.text.contains("Set up this device for Sluice"))
        let certificate = try CertificateInfo(pem: String(contentsOfFile: setup.caCert, encoding: .utf8))
        #expect(page.text.contains(certificate.sha256Fingerprint))
        for step in [
            "iOS and iPadOS", "Android (apps)", "network_security_config", "Android 14", "macOS", "Windows", "Linux",
            "Firefox",
        ] {
            #expect(page.text.contains(step), "\(step)")
        }
        let pem = try client.request(RawClient.get("http://sluice.internal/sluice-ca.pem"))
        #expect(pem.text == certificate.pem)
        let der = try client.request(RawClient.get("http://sluice.internal/sluice-ca.crt"))
        #expect(der.header("content-type") == "application/x-x509-ca-cert")
        #expect(der.header("content-disposition") == "attachment; filename=\"sluice-ca.crt\"")
        #expect(der.body == certificate.der)
        let openssl = try runProgram(
            "openssl", ["x509", "-inform", "DER", "-noout", "-fingerprint", "-sha256"], input: der.body,
            dropErrors: true)
        #expect(openssl.status == 0)
        #expect(openssl.output.contains(certificate.sha256Fingerprint), "\(openssl.output)")
        let profile = try client.request(RawClient.get("http://sluice.internal/sluice-ca.mobileconfig"))
        #expect(profile.header("content-type") == "application/x-apple-aspen-config")
        let script = """
            import plistlib, sys, hashlib
            d = plistlib.loads(sys.stdin.buffer.read())
            p = d["PayloadContent"][0]
            print(d["PayloadType"], p["PayloadType"], hashlib.sha256(p["PayloadContent"]).hexdigest(), d["PayloadUUID"] != p["PayloadUUID"])
            """
        let plist = try runProgram("python3", ["-c", script], input: profile.body, dropErrors: true)
        let expected = certificate.sha256Fingerprint.filter(\.isHexDigit).lowercased()
        #expect(plist.status == 0)
        #expect(plist.output == "Configuration com.apple.security.root \(expected) True\n", "\(plist.output)")
        // Another path of the reserved name is a 404 problem; its https form is refused at CONNECT
        let dotted = try client.request(RawClient.get("http://SLUICE.internal./sluice-ca.pem"))
        #expect(dotted.text == certificate.pem, "the name in any case, with the root's dot")
        let missing = try client.request(RawClient.get("http://sluice.internal/admin"))
        #expect(missing.status == 404)
        #expect(ErrorTests.problemType(missing) == "onboarding-not-found")
        // The page with another method: 405 naming the methods it takes (RFC 9110 §15.5.6)
        let posted = try client.request(
            "POST http://sluice.internal/ HTTP/1.1\r\nHost: sluice.internal\r\nContent-Length: 0\r\n\r\n",
            method: "POST")
        #expect(posted.status == 405 && posted.header("allow") == "GET, HEAD")
        #expect(ErrorTests.problemType(posted) == "method-not-allowed")
        let tls = try RawClient(port: proxy.port)
        let refused = try tls.request("CONNECT sluice.internal:443 HTTP/1.1\r\nHost: sluice.internal:443\r\n\r\n")
        #expect(refused.status == 404)
        // And through a CONNECT to port 80 (a browser's ws:// habit), without any DNS
        let tunnel = try RawClient(port: proxy.port)
        try tunnel.send("CONNECT sluice.internal:80 HTTP/1.1\r\nHost: sluice.internal:80\r\n\r\n")
        #expect(try tunnel.reader.readHead()?.startLine.hasPrefix("HTTP/1.1 200") == true)
        let inside = try tunnel.request("GET /sluice-ca.pem HTTP/1.1\r\nHost: sluice.internal\r\n\r\n")
        #expect(inside.text == certificate.pem)
    }

    @Test(
        "Asked directly (a phone not set up yet), it is answered without proxy credentials; other paths still ask for them"
    )
    func direct() throws {
        let setup = try Setup()
        let password = setup.directory.appendingPathComponent("password").path
        try "s3cret\n".write(toFile: password, atomically: true, encoding: .utf8)
        let proxy = try ProxyHarness(
            configuration: setup.configuration(extra: "proxy_auth: {user: dev, password_file: \(password)}"))
        let client = try RawClient(port: proxy.port)
        let page = try client.request("GET / HTTP/1.1\r\nHost: 192.168.1.20:8080\r\n\r\n")
        #expect(page.status == 200)
        #expect(page.text.contains("asks for a user and password"))
        let other = try client.request("GET /index.html HTTP/1.1\r\nHost: 192.168.1.20:8080\r\n\r\n")
        #expect(other.status == 407, "anything else still asks for credentials")
        let proxied = try RawClient(port: proxy.port).request(RawClient.get("http://sluice.internal/"))
        #expect(proxied.status == 407, "through the proxy, the credentials come first")
    }

    @Test(
        "The admin API's device panel: addresses, credentials hint, CA, and a QR code zbarimg reads as the onboarding URL"
    )
    func devicePanel() throws {
        let setup = try Setup()
        let proxy = try ProxyHarness(
            configuration: setup.configuration(extra: "allow_clients: [127.0.0.0/8]"), listen: "0.0.0.0:0")
        let admin = try proxy.startAdmin()
        let summary = try RawClient(port: admin).request("GET /device HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(summary.body)) as? [String: Any])
        let addresses = json["lan_addresses"] as? [String] ?? []
        #expect(json["reachable_from_lan"] as? Bool == !addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.hasSuffix(":\(proxy.port)") && !$0.hasPrefix("127.") })
        let url = try #require(json["onboarding_url"] as? String)
        #expect(url == (addresses.first.map { "http://\($0)/" } ?? "http://sluice.internal/"))
        #expect((json["ca"] as? [String: Any])?["sha256"] is String)
        #expect(json["allow_clients"] as? [String] == ["127.0.0.0/8"])
        let png = try RawClient(port: admin).request("GET /device/qr.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(png.header("content-type") == "image/png")
        #expect(Array(png.body.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        guard hasTool("zbarimg") else {
            print("skipped: zbarimg (zbar-tools) is not installed; scripts/setup.sh --tests installs it")
            return
        }
        let file = setup.directory.appendingPathComponent("qr.png")
        try Data(png.body).write(to: file)
        let decoded = try runProgram("zbarimg", ["--quiet", "--raw", file.path], dropErrors: true)
        #expect(decoded.status == 0)
        #expect(decoded.output.trimmingCharacters(in: .whitespacesAndNewlines) == url)
    }

    @Test("The PNG's chunks carry the right CRCs and its size follows the symbol")
    func pngStructure() throws {
        let code = try QRCode("http://sluice.internal/")
        let png = QRImage.png(code, scale: 4)
        func word(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        #expect(word(16) == (code.size + 8) * 4, "width: the symbol and a quiet zone of four modules")
        var offset = 8
        var types: [String] = []
        while offset < png.count {
            let length = word(offset)
            let typed = Array(png[offset + 4..<offset + 8 + length])
            types.append(String(decoding: typed.prefix(4), as: UTF8.self))
            #expect(UInt32(word(offset + 8 + length)) == QRImage.crc32(typed))
            offset += 12 + length
        }
        #expect(types == ["IHDR", "IDAT", "IEND"])
        #expect(QRImage.crc32(Array("123456789".utf8)) == 0xCBF4_3926, "the check value of CRC-32")
        #expect(QRImage.svg(code).hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    }
}

@Suite("Where other devices reach the proxy")
struct LANAddressesTests {
    @Test("Loopback listeners are reached from this machine only; a named address is itself; bridges are not LAN")
    func addresses() throws {
        #expect(LANAddresses.reaching(try #require(SocketAddress("127.0.0.1:8080"))) == [])
        #expect(LANAddresses.reaching(try #require(SocketAddress("192.168.1.20:8080"))) == ["192.168.1.20:8080"])
        let all = LANAddresses.reaching(try #require(SocketAddress("0.0.0.0:3128")))
        #expect(all.allSatisfy { $0.hasSuffix(":3128") && !$0.hasPrefix("127.") && !$0.hasPrefix("169.254.") })
        #expect(LANAddresses.isBridge("docker0") && LANAddresses.isBridge("br-1a2b") && LANAddresses.isBridge("veth9"))
        #expect(!LANAddresses.isBridge("eth0") && !LANAddresses.isBridge("wlp2s0") && !LANAddresses.isBridge("enp3s0"))
    }
}
