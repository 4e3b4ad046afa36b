import EventIO
import Foundation
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

    @Test("proxy_auth alone serves every network (the password decides); with allow_clients, only those")
    func passwordAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-policy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("password").path
        try "secret\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        var configuration = Configuration()
        configuration.proxyAuth = Configuration.ProxyAuth(user: "phone", passwordFile: file)
        let credentials = try ProxyCredentials(configuration.proxyAuth!)
        let passwordOnly = Policy(configuration: configuration, credentials: credentials)
        #expect(passwordOnly.allowsClient(SocketAddress("192.168.1.5:5000")!))
        #expect(passwordOnly.allowsClient(SocketAddress("[fd00::5]:5000")!))
        #expect(ProxyServer.likelyMistakes(configuration).isEmpty)
        // The onboarding page without credentials: to local networks only, when the password is
        // the only control.
        #expect(passwordOnly.servesOnboardingFreely(to: SocketAddress("192.168.1.5:5000")!))
        #expect(passwordOnly.servesOnboardingFreely(to: SocketAddress("[fe80::1]:5000")!))
        #expect(!passwordOnly.servesOnboardingFreely(to: SocketAddress("203.0.113.9:5000")!))
        #expect(!passwordOnly.servesOnboardingFreely(to: SocketAddress("[2001:db8::1]:5000")!))
        configuration.allowClients = [CIDR("192.168.1.0/24")!]
        let both = Policy(configuration: configuration, credentials: credentials)
        #expect(both.allowsClient(SocketAddress("192.168.1.5:5000")!))
        #expect(!both.allowsClient(SocketAddress("10.0.0.5:5000")!))
        // A password file others can read, and every address without a password, are said at start.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        #expect(ProxyServer.likelyMistakes(configuration).first?.contains("chmod 600") == true)
        var open = Configuration()
        open.allowClients = [CIDR("0.0.0.0/0")!]
        #expect(ProxyServer.likelyMistakes(open).first?.contains("open proxy") == true)
    }

    @Test("Targets that are the proxy itself are loops; CONNECT ports are checked")
    func targets() {
        let policy = Policy(configuration: Configuration())
        policy.addSelfAddress(SocketAddress("127.0.0.1:8080")!)
        #expect(policy.targetsSelf(host: "127.0.0.1", port: 8080))
        #expect(policy.targetsSelf(host: "localhost", port: 8080))
        #expect(policy.targetsSelf(host: "127.9.9.9", port: 8080))
        #expect(policy.targetsSelf(host: "[::1]", port: 8080))
        #expect(!policy.targetsSelf(host: "127.0.0.1", port: 8081))
        #expect(!policy.targetsSelf(host: "example.com", port: 8080))
        #expect(policy.connectRefusal(host: "example.com", port: 443, localClient: true) == nil)
        #expect(
            policy.connectRefusal(host: "example.com", port: 25, localClient: true)
                == .forbidden(reason: .connectPortNotAllowed(25)))
        #expect(
            policy.connectRefusal(host: "169.254.169.254", port: 443, localClient: true)
                == .forbidden(reason: .targetDenied(target: "169.254.169.254", rule: "deny_targets 169.254.0.0/16")))
        #expect(policy.connectRefusal(host: "127.0.0.1", port: 443, localClient: true) == nil)
        #expect(policy.connectRefusal(host: "127.0.0.1", port: 443, localClient: false) != nil)
    }

    @Test("The remembered allowed target lets through only the same host, port and kind of client")
    func rememberedTarget() throws {
        let policy = Policy(configuration: Configuration())
        let origin = try #require(TargetURL("http://127.0.0.1:9000/a"))
        #expect(policy.refusal(for: origin, localClient: true) == nil)
        #expect(policy.refusal(for: origin, localClient: true) == nil)
        #expect(policy.refusal(for: origin, localClient: false) != nil)  // loopback targets: local clients only
        let metadata = try #require(TargetURL("http://169.254.169.254/latest"))
        #expect(policy.refusal(for: metadata, localClient: true) != nil)
        #expect(policy.refusal(for: origin, localClient: true) == nil)
        policy.addSelfAddress(SocketAddress("127.0.0.1:9000")!)  // now a loop
        #expect(policy.refusal(for: origin, localClient: true) == .forbidden(reason: .loopDetected("127.0.0.1:9000")))
        let other = try #require(TargetURL("http://127.0.0.1:9001/a"))
        #expect(policy.refusal(for: other, localClient: true) == nil)
    }

    @Test("A tls.intercept entry with a port lets CONNECT reach that host on that port only")
    func interceptListedPort() throws {
        let configuration = try ConfigLoader.load(
            yaml: "tls: { intercept: [\"localhost:18443\", \"*.example.com\", \"[::1]:8443\"] }\n")
        let policy = Policy(configuration: configuration)
        #expect(policy.connectRefusal(host: "localhost", port: 18443, localClient: true) == nil)
        #expect(policy.connectRefusal(host: "[::1]", port: 8443, localClient: true) == nil)
        #expect(
            policy.connectRefusal(host: "localhost", port: 18444, localClient: true)
                == .forbidden(reason: .connectPortNotAllowed(18444)))
        #expect(
            policy.connectRefusal(host: "other.test", port: 18443, localClient: true)
                == .forbidden(reason: .connectPortNotAllowed(18443)))
        // A glob without a port intercepts, but opens no port.
        #expect(
            policy.connectRefusal(host: "api.example.com", port: 8443, localClient: true)
                == .forbidden(reason: .connectPortNotAllowed(8443)))
        #expect(policy.connectRefusal(host: "api.example.com", port: 443, localClient: true) == nil)
    }

    @Test("tls.intercept entries: a host glob with or without a port; a bad port is an error with its key")
    func interceptEntries() throws {
        let targets = try ConfigLoader.load(
            yaml: "tls: { intercept: [\"*.example.com\", \"localhost:18443\", \"[::1]:8443\"] }\n"
        ).tls.intercept
        #expect(targets.map(\.port) == [nil, 18443, 8443])
        #expect(targets[0].matches(host: "api.example.com", port: 443))
        #expect(targets[1].matches(host: "localhost", port: 18443) && !targets[1].matches(host: "localhost", port: 443))
        #expect(targets[2].matches(host: "::1", port: 8443))
        #expect(throws: ConfigError.self) { try ConfigLoader.load(yaml: "tls: { intercept: [\"localhost:99999\"] }\n") }
    }

    @Test("The target guard: self, deny_targets, and loopback by client locality")
    func targetGuard() {
        var guardian = TargetGuard()
        guardian.selfAddresses = [SocketAddress("0.0.0.0:8080")!]
        let local = { (text: String) in guardian.refusal(SocketAddress(text)!, localClient: true) }
        let remote = { (text: String) in guardian.refusal(SocketAddress(text)!, localClient: false) }
        #expect(local("127.0.0.5:8080") == .loopDetected("127.0.0.5:8080"))
        #expect(local("169.254.169.254:80") != nil)
        #expect(local("[fe80::1]:443") != nil)
        #expect(local("[::ffff:169.254.169.254]:80") != nil)
        #expect(local("100.100.100.200:80") != nil)
        #expect(local("[fd00:ec2::254]:80") != nil)
        #expect(local("0.0.0.0:80") != nil)
        #expect(local("93.184.216.34:80") == nil)
        #expect(local("127.0.0.1:3000") == nil)
        #expect(remote("127.0.0.1:3000") == .targetDenied(target: "127.0.0.1", rule: "loopback_targets: local-clients"))
        #expect(remote("[::1]:3000") != nil)
        #expect(remote("192.0.2.10:80") == nil)
        #expect(remote("[::ffff:127.0.0.1]:3000") != nil, "a mapped loopback address is loopback")
        #expect(remote("[::2]:3000") == nil, "::2 is neither loopback nor unspecified")
        #expect(local("[::]:8080") == .loopDetected("[::]:8080"), "the unspecified address on our port is us")
        #expect(local("[::1]:8081") == nil)
        // The admin API's port: a client on this machine reaches it through the proxy (its page,
        // its API from a terminal set to use the proxy); any other, never (with loopback open too).
        guardian.adminAddresses = [SocketAddress("127.0.0.1:8081")!]
        #expect(local("127.0.0.1:8081") == nil)
        guardian.loopback = .all
        #expect(remote("127.0.0.1:8081") == .loopDetected("127.0.0.1:8081"))
        #expect(remote("[::ffff:127.0.0.1]:8081") == .loopDetected("127.0.0.1:8081"))
        #expect(remote("127.0.0.1:3000") == nil)
        guardian.loopback = .none
        #expect(local("127.0.0.1:3000") != nil)
    }
}
