import Contract
import Testing

@testable import Sluice

/// A response's contract check as a delivery stage: what it holds, what it lets stream, and what
/// reaches the client (a `502` instead of a broken promise in enforce mode).
@Suite("ContractStage: the contract check on the way to the client")
struct ContractStageTests {
    static let schema = #"{"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}"#

    /// A response check of rule `pets` whose body (when `validatesBody`) must be `{"id": <integer>}`.
    static func run(_ mode: ContractRule.Mode, validatesBody: Bool = true, limit: Int = 1024) throws -> ContractRun {
        var settings = ContractRule(source: .schema("pet.json"))
        settings.onViolation = mode
        var check = HeadCheck()
        check.template = "/pets/1"
        if validatesBody {
            let uri = "https://sluice.invalid/pet.json"
            let registry = SchemaRegistry()
            registry.add(try SourceDocument.read(text: schema, uri: uri))
            check.bodySchema = try SchemaValidator.compile(uri, base: uri, registry: registry)
        }
        return ContractRun(
            rule: "pets", settings: settings, direction: .response, method: "GET", check: check, status: 200,
            coding: nil, limit: limit)
    }

    static func head(_ fields: [(String, String)]) -> ResponseHead {
        ResponseHead(status: 200, headers: HTTPFields([("Content-Type", "application/json")] + fields))
    }

    static func chain(
        _ run: ContractRun, limit: Int = 1024
    ) -> (DeliveryChain<ResponseHead>, RecordingSink<ResponseHead>) {
        let sink = RecordingSink<ResponseHead>()
        return (DeliveryChain<ResponseHead>([ContractStage(run, limit: limit)], sink: sink), sink)
    }

    static let passedMark = #"mark: passed; reason="contract"; rule="pets""#
    static let tooLargeMark = #"mark: not-validated; reason="body-too-large"; rule="pets""#

    @Test("The plan: enforce holds unless the announced length is past the limit; report holds small announced bodies")
    func plan() throws {
        let chunked = [("Transfer-Encoding", "chunked")]
        let rows: [(ContractRule.Mode, Bool, [(String, String)], ContractStage.Plan)] = [
            (.enforce, true, [("Content-Length", "10")], .hold),
            (.enforce, true, [("Content-Length", "1024")], .hold),
            (.enforce, true, chunked, .hold),
            (.enforce, true, [], .hold),
            (.enforce, true, [("Content-Length", "1025")], .tooLarge),
            (.report, true, [("Content-Length", "10")], .hold),
            (.report, true, [("Content-Length", "65536")], .hold),
            (.report, true, [("Content-Length", "65537")], .stream),
            (.report, true, chunked, .stream),
            (.report, true, [("Content-Length", "10"), ("Transfer-Encoding", "chunked")], .stream),
            (.report, true, [], .stream),
            (.enforce, false, [("Content-Length", "10")], .stream),
            (.report, false, [("Content-Length", "10")], .stream),
        ]
        for (mode, validatesBody, fields, expected) in rows {
            let run = try Self.run(mode, validatesBody: validatesBody)
            #expect(
                ContractStage.plan(run, Self.head(fields), limit: 1024) == expected,
                "\(mode), body schema \(validatesBody), \(fields)")
        }
    }

    @Test("Enforce: a body that breaks the schema never reaches the client; the sink is told to fail instead")
    func enforceBroken() throws {
        let (chain, sink) = Self.chain(try Self.run(.enforce))
        chain.head(Self.head([("Content-Length", "10")]))
        #expect(chain.send(#"{"id":"#))
        #expect(chain.send(#""x"}"#))
        #expect(sink.events.isEmpty, "held for the verdict")
        chain.end()
        #expect(sink.heads.isEmpty && sink.body.isEmpty && sink.ends == 0)
        #expect(sink.events.count == 3)
        #expect(sink.events.first?.hasPrefix("verdict: failed: 1 violation: /id type") == true, "\(sink.events)")
        // The refused response, whole, for a recording; then the failure.
        #expect(sink.events.dropFirst().first == "rejected: 200, 10 bytes", "\(sink.events)")
        #expect(sink.events.last == "fail")
        guard case .contractViolation(let failure) = sink.failures.first else {
            Issue.record("expected a contract violation, got \(sink.failures)")
            return
        }
        #expect(sink.failures.count == 1)
        #expect(failure.rule == "pets" && failure.total == 1)
        #expect(failure.violations.map(\.pointer) == ["/id"])
        #expect(failure.violations.map(\.keyword) == ["type"])
    }

    @Test("Enforce before a stage that holds anyway: nothing held twice, a broken body still fails at the end")
    func enforceHeldLater() throws {
        let sink = RecordingSink<ResponseHead>()
        let chain = DeliveryChain<ResponseHead>(
            [ContractStage(try Self.run(.enforce), limit: 1024, heldLater: true)], sink: sink)
        chain.head(Self.head([("Content-Length", "10")]))
        #expect(sink.events == ["head"], "passed on at once: the later stage holds it")
        #expect(chain.send(#"{"id":"x"}"#))
        chain.end()
        #expect(sink.body == Array(#"{"id":"x"}"#.utf8))
        #expect(sink.events.last == "fail" && sink.ends == 0, "\(sink.events)")
        guard case .contractViolation = sink.failures.first else {
            Issue.record("expected a contract violation, got \(sink.failures)")
            return
        }
    }

    @Test("Enforce: a valid body goes on whole after its verdict and a passed mark")
    func enforceValid() throws {
        let (chain, sink) = Self.chain(try Self.run(.enforce))
        let head = Self.head([("Content-Length", "8")])
        chain.head(head)
        #expect(chain.send(#"{"id""#))
        #expect(chain.send(#":7}"#))
        #expect(sink.events.isEmpty)
        chain.end()
        #expect(sink.heads == [head])
        #expect(sink.events == ["verdict: passed", Self.passedMark, "head", #"body offer [{"id":7}]"#, "end"])
        #expect(sink.failures.isEmpty)
    }

    @Test(
        "A held body past the limit: marked too large, head and held bytes offered before the piece, the rest streams")
    func heldPastLimit() throws {
        let (chain, sink) = Self.chain(try Self.run(.enforce, limit: 16), limit: 16)
        chain.head(Self.head([("Transfer-Encoding", "chunked")]))
        #expect(chain.send("0123456789"))
        #expect(sink.events.isEmpty)
        sink.refusesOffers = true
        #expect(!chain.send("abcdefghij"), "the held bytes are offered first; the client is full: the piece waits")
        sink.refusesOffers = false
        #expect(chain.drained())
        #expect(chain.send("abcdefghij"))
        #expect(chain.send("late"))
        chain.end()
        #expect(
            sink.events == [
                Self.tooLargeMark, "head", "body offer [0123456789]", "body offer [abcdefghij]",
                "body offer [late]", "verdict: not-validated: the body is larger than max_transform_body (16 bytes)",
                "end",
            ])
        #expect(sink.failures.isEmpty)
    }

    @Test("Enforce with an announced length past the limit: marked too large, the head passes at once")
    func enforceTooLarge() throws {
        let (chain, sink) = Self.chain(try Self.run(.enforce, limit: 16), limit: 16)
        chain.head(Self.head([("Content-Length", "17")]))
        #expect(sink.events == [Self.tooLargeMark, "head"])
        #expect(chain.send(#"{"id":"no"}"#))
        chain.end()
        #expect(
            sink.events.suffix(2) == [
                "verdict: not-validated: the body is larger than max_transform_body (16 bytes)", "end",
            ])
        #expect(sink.failures.isEmpty, "not validated: nothing to enforce")
    }

    @Test("Report: a large body streams, its head at once; a broken body still ends normally")
    func reportStreams() throws {
        let (chain, sink) = Self.chain(try Self.run(.report))
        let head = Self.head([("Content-Length", "100000")])
        chain.head(head)
        #expect(sink.heads == [head])
        #expect(sink.events == ["head"], "no mark: the verdict is not known yet")
        #expect(chain.send(#"{"id":"#))
        #expect(chain.send(#""x"}"#))
        chain.end()
        #expect(sink.body == Array(#"{"id":"x"}"#.utf8))
        #expect(sink.events.count == 5)
        #expect(sink.events.last == "end")
        #expect(sink.events[1...2] == [#"body offer [{"id":]"#, #"body offer ["x"}]"#])
        #expect(sink.events[3].hasPrefix("verdict: failed: 1 violation: /id type"), "\(sink.events)")
        #expect(sink.ends == 1 && sink.failures.isEmpty)
    }

    @Test("Streaming: an offer the client refused and takes later is validated once")
    func refusedOfferValidatedOnce() throws {
        let (chain, sink) = Self.chain(try Self.run(.report))
        chain.head(Self.head([("Content-Length", "100000")]))
        #expect(chain.send(#"{"id""#))
        sink.refusesOffers = true
        #expect(!chain.send(#":7}"#), "streaming: the client's refusal comes back")
        sink.refusesOffers = false
        #expect(chain.send(#":7}"#), "offered again after the client drained")
        chain.end()
        #expect(sink.body == Array(#"{"id":7}"#.utf8))
        #expect(sink.events.suffix(2) == ["verdict: passed", "end"], "the validator saw {\"id\":7} once")
    }

    @Test("Report: a small announced body is held so that its head carries the verdict")
    func reportHolds() throws {
        let (chain, sink) = Self.chain(try Self.run(.report))
        chain.head(Self.head([("Content-Length", "10")]))
        #expect(chain.send(#"{"id":"x"}"#))
        #expect(sink.events.isEmpty)
        chain.end()
        #expect(sink.events.count == 5)
        #expect(sink.events[1] == #"mark: failed; reason="contract"; violations=1; rule="pets""#)
        #expect(sink.events[2...] == ["head", #"body offer [{"id":"x"}]"#, "end"])
        #expect(sink.failures.isEmpty, "report mode never fails the response")
    }
}

@Suite("ContractFailure: how a broken contract is named in the log and the problem")
struct ContractFailureTests {
    @Test("The whole value is (root) in the log field and the detail, never / (the member named \"\")")
    func rootIsNamedRoot() {
        let violation = { (pointer: String) in
            Violation(pointer: pointer, keyword: "type", expected: "object", found: "array", schema: "#")
        }
        let failure = ContractFailure(
            rule: "api", direction: .response, operationId: "list", method: "GET", template: "/items",
            violations: [violation(""), violation("/")], total: 2)
        #expect(failure.logField == "2:(root):type,/:type")
        #expect(failure.detail.hasSuffix("first: (root): type: expected object, found array"))
    }

    @Test("An operation the document does not describe is named by its request, not its method alone")
    func undocumentedOperationNamesTheRequest() {
        let failure = ContractFailure(
            rule: "cafe", direction: .response, operationId: nil, method: "GET", template: nil,
            violations: [
                Violation(
                    pointer: "", keyword: "undocumented-operation", expected: "a path the document describes",
                    found: "GET /nope", schema: "#/paths")
            ], total: 1)
        #expect(failure.detail.hasPrefix("The response to GET /nope breaks the contract of rule cafe: 1 violation"))
    }
}
