import Foundation
import Sluice
import SluiceTestKit
import Testing

/// Where a client may make the proxy go: CONNECT ports, link-local and metadata addresses, the
/// proxy's own ports, loopback services, and who may use the proxy at all.
@Suite("Adversarial: targets and clients")
struct TargetTests {
    static func connect(_ client: RawClient, _ authority: String) throws -> ReceivedResponse {
        try client.send("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n")
        return try client.reader.readResponse(method: "CONNECT")
    }

    @Test(
        "CONNECT to disallowed ports and to link-local or metadata addresses is 403; nothing is dialled",
        arguments: [
            ("127.0.0.1:22", "connect-port-not-allowed"),
            ("example.com:25", "connect-port-not-allowed"),
            ("169.254.169.254:443", "target-not-allowed"),
            ("[fe80::1]:443", "target-not-allowed"),
            ("100.100.100.200:443", "target-not-allowed"),
            ("[fd00:ec2::254]:443", "target-not-allowed"),
            ("0.0.0.0:443", "target-not-allowed"),
        ])
    func connectRefused(authority: String, type: String) throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        let response = try Self.connect(client, authority)
        #expect(response.status == 403)
        #expect(ErrorTests.problemType(response) == type)
        #expect(client.isClosedByPeer())
        #expect(proxy.stats.tunnels == 0)
    }

    @Test("Plain requests to metadata addresses are 403 before any upstream work")
    func metadataRequests() throws {
        let proxy = try ProxyHarness()
        let client = try RawClient(port: proxy.port)
        for url in ["http://169.254.169.254/latest/meta-data/", "http://[fe80::a9fe:a9fe]/", "http://100.100.100.200/"]
        {
            let response = try client.request(RawClient.get(url))
            #expect(response.status == 403, "\(url)")
            #expect(ErrorTests.problemType(response) == "target-not-allowed", "\(url)")
        }
        #expect(proxy.stats.upstreamTasks == 0)
    }

    @Test("A name that resolves to a denied address is refused when connecting (checked after DNS)")
    func deniedAfterResolution() throws {
        let origin = try OriginServer { _ in .text("loopback service") }
        defer { origin.stop() }
        var configuration = Configuration()
        configuration.loopbackTargets = .none
        let proxy = try ProxyHarness(configuration: configuration)
        let client = try RawClient(port: proxy.port)
        // Names are not judged by their spelling; only the resolved 127.0.0.1 gives it away.
        let response = try client.request(RawClient.get("http://localhost:\(origin.port)/"))
        #expect(response.status == 403)
        #expect(ErrorTests.problemType(response) == "target-not-allowed")
        var tunnels = configuration
        tunnels.connectPorts = [origin.port]
        let tunnelling = try ProxyHarness(configuration: tunnels)
        let tunnel = try Self.connect(try RawClient(port: tunnelling.port), "localhost:\(origin.port)")
        #expect(tunnel.status == 403)
        #expect(ErrorTests.problemType(tunnel) == "target-not-allowed")
        #expect(origin.requests.isEmpty)
    }

    @Test(
        "The proxy's own port is a loop for requests and CONNECT; its admin port answers a local client's requests, never a tunnel"
    )
    func ownPorts() throws {
        // Ports known before start, so that connect_ports can name them.
        let ports = try (0..<2).map { _ in
            let probe = try TestListener()
            probe.closeUnused()
            return probe.port
        }
        var configuration = Configuration()
        configuration.connectPorts = ports
        let proxy = try ProxyHarness(configuration: configuration, listen: "127.0.0.1:\(ports[0])")
        let admin = try proxy.startAdmin(listen: "127.0.0.1:\(ports[1])")
        #expect([proxy.port, admin] == ports)
        for port in ports {
            for host in ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"] {
                let client = try RawClient(port: proxy.port)
                let response = try client.request(RawClient.get("http://\(host):\(port)/stats"))
                if port == admin {
                    #expect(response.status == 200, "\(host):\(port)")
                } else {
                    #expect(response.status == 403, "\(host):\(port)")
                    #expect(ErrorTests.problemType(response) == "loop-detected", "\(host):\(port)")
                }
                let tunnel = try Self.connect(try RawClient(port: proxy.port), "\(host):\(port)")
                #expect(tunnel.status == 403, "CONNECT \(host):\(port)")
                #expect(ErrorTests.problemType(tunnel) == "loop-detected", "CONNECT \(host):\(port)")
            }
        }
        #expect(proxy.stats.tunnels == 0)
    }

    @Test(
        "Clients from other machines: refused unless allow_clients lists them, and kept off loopback services",
        .enabled(if: nonLoopbackIPv4() != nil, "this machine has no non-loopback IPv4 address"))
    func remoteClients() throws {
        let address = try #require(nonLoopbackIPv4())
        let origin = try OriginServer { _ in .text("loopback service") }
        defer { origin.stop() }
        // No access control at all: a listener others reach does not start.
        #expect(throws: ListenFailure.self) { _ = try ProxyHarness(listen: "0.0.0.0:0") }
        // Not listed: 403 and closed, before any request is read.
        var elsewhere = Configuration()
        elsewhere.allowClients = [CIDR("203.0.113.0/24")!]
        let closed = try ProxyHarness(configuration: elsewhere, listen: "0.0.0.0:0")
        let stranger = try RawClient(host: address, port: closed.port)
        let refused = try stranger.reader.readResponse()
        #expect(refused.status == 403)
        #expect(ErrorTests.problemType(refused) == "client-not-allowed")
        // Listed: served, but loopback targets stay off limits (loopback_targets: local-clients).
        var configuration = Configuration()
        configuration.allowClients = [CIDR("\(address)/32")!]
        let open = try ProxyHarness(configuration: configuration, listen: "0.0.0.0:0")
        let remote = try RawClient(host: address, port: open.port)
        let loopback = try remote.request(RawClient.get(origin.url("/")))
        #expect(loopback.status == 403)
        #expect(ErrorTests.problemType(loopback) == "target-not-allowed")
        let local = try RawClient(port: open.port)
        #expect(try local.request(RawClient.get(origin.url("/"))).text == "loopback service")
        #expect(origin.requests.count == 1)
        // loopback_targets: all opens them to listed clients too.
        configuration.loopbackTargets = .all
        let all = try ProxyHarness(configuration: configuration, listen: "0.0.0.0:0")
        let allowed = try RawClient(host: address, port: all.port)
        #expect(try allowed.request(RawClient.get(origin.url("/"))).text == "loopback service")
    }
}
