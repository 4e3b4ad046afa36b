import Testing

@testable import Sluice

@Suite("Which CONNECT tunnels are intercepted")
struct InterceptDecisionTests {
    @Test("tls.passthrough wins over intercept, also for a name written with its final dot")
    func passthroughWins() throws {
        var settings = Configuration.TLS()
        settings.intercept = [InterceptTarget(host: try Glob.parse("*", kind: .host).get())]
        settings.passthrough = [try Glob.parse("localhost", kind: .host).get()]
        let rules = RuleBook()
        for host in ["localhost", "localhost.", "LOCALHOST."] {
            #expect(!Interceptor.intercepts(host: host, port: 443, settings: settings, rules: rules), "\(host)")
        }
        for host in ["example.com", "example.com.", "localhost.example"] {
            #expect(Interceptor.intercepts(host: host, port: 443, settings: settings, rules: rules), "\(host)")
        }
    }
}
