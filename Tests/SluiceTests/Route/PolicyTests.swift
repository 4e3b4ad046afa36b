import EventIO
import Testing

@testable import Sluice

@Suite("Access control and loop prevention")
struct PolicyTests {
    @Test(
        "CIDRs match the addresses inside them",
        arguments: [
            ("10.0.0.0/8", "10.200.1.2", true), ("10.0.0.0/8", "11.0.0.1", false),
            ("192.168.1.0/24", "192.168.1.255", true),
            ("192.168.1.0/25", "192.168.1.200", false), ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false),
            ("0.0.0.0/0", "8.8.8.8", true), ("203.0.113.7", "203.0.113.7", true), ("203.0.113.7", "203.0.113.8", false),
        ])
    func cidr(network: String, address: String, inside: Bool) throws {
        let cidr = try #require(CIDR(network))
        #expect(cidr.contains(SocketAddress.parseIP(address)!) == inside)
    }

    @Test("Malformed CIDRs are rejected", arguments: ["10.0.0.0/33", "10.0.0/8", "fd00::/129", "abc", "1.2.3.4/x"])
    func badCIDR(text: String) { #expect(CIDR(text) == nil) }

    @Test("Only loopback clients are allowed unless allow_clients lists them")
    func clients() {
        var configuration = Configuration()
        let closed = Policy(configuration: configuration)
        #expect(closed.allowsClient(SocketAddress("127.0.0.1:5000")!))
        #expect(closed.allowsClient(SocketAddress("[::1]:5000")!))
        #expect(closed.allowsClient(SocketAddress("[::ffff:127.0.0.1]:5000")!))
        #expect(!closed.allowsClient(SocketAddress("192.168.1.5:5000")!))
        configuration.allowClients = [CIDR("192.168.1.0/24")!]
        let open = Policy(configuration: configuration)
        #expect(open.allowsClient(SocketAddress("192.168.1.5:5000")!))
        #expect(!open.allowsClient(SocketAddress("192.168.2.5:5000")!))
    }

    @Test("Targets that are the proxy itself are loops; CONNECT ports are checked")
    func targets() {
        var policy = Policy(configuration: Configuration())
        policy.selfAddresses = [SocketAddress("127.0.0.1:8080")!]
        #expect(policy.targetsSelf(host: "127.0.0.1", port: 8080))
        #expect(policy.targetsSelf(host: "localhost", port: 8080))
        #expect(policy.targetsSelf(host: "127.9.9.9", port: 8080))
        #expect(policy.targetsSelf(host: "[::1]", port: 8080))
        #expect(!policy.targetsSelf(host: "127.0.0.1", port: 8081))
        #expect(!policy.targetsSelf(host: "example.com", port: 8080))
        #expect(policy.connectRefusal(host: "example.com", port: 443) == nil)
        #expect(policy.connectRefusal(host: "example.com", port: 25) == .forbidden(reason: .connectPortNotAllowed(25)))
    }
}
