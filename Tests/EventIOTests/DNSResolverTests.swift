import EventIO
import Testing

@Suite("EventIO: the resolver")
struct DNSResolverTests {
    @Test("Literals and /etc/hosts names resolve on the loop; a name under .invalid fails with the resolver's words")
    func resolve() throws {
        let loop = try EventLoop()
        let resolver = DNSResolver(loop: loop)
        var answers: [String: String] = [:]
        for name in ["127.0.0.1", "::1", "localhost", "nothing-here.invalid"] {
            resolver.resolve(name) { result in
                switch result {
                case .success(let address): answers[name] = address.host
                case .failure(let error): answers[name] = "error: \(error)"
                }
                if answers.count == 4 { loop.stop() }
            }
        }
        let deadline = Timer(loop: loop) { loop.stop() }
        deadline.schedule(milliseconds: 5000)
        loop.run()
        #expect(answers["127.0.0.1"] == "127.0.0.1")
        #expect(answers["::1"] == "::1")
        #expect(answers["localhost"] == "127.0.0.1" || answers["localhost"] == "::1", "\(answers)")
        #expect(answers["nothing-here.invalid"]?.hasPrefix("error: ") == true, "\(answers)")
    }
}
