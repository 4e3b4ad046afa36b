import Codec
import Contract

/// One response's (or request's) contract check in progress: the head checks done at once, the
/// body fed to the streaming validator as it passes (or as it is held, in enforce mode).
final class ContractRun {
    enum Outcome: Equatable {
        case passed
        case failed(ContractFailure)
        /// The body could not be validated (too large to decode, say); the reason.
        case notValidated(String)
    }

    let rule: String
    let settings: ContractRule
    let direction: Direction
    let method: String
    let check: HeadCheck
    /// The response's status as the origin (or the cache) gave it; 0 for a request.
    let status: Int
    let limit: Int
    /// Where the body's check stands.
    private var body: Body
    private let coding: ContentCoding?
    private(set) var outcome: Outcome?

    /// The body's check, phase by phase.
    private enum Body {
        /// Nothing of the body is checked: the contract describes none, or it stopped being
        /// checked (too large, an unknown coding); the reason, when there is one to say.
        case unvalidated(String?)
        /// Fed to the validator as it passes.
        case validating(Validation)
        /// A compressed body kept (up to `limit`) to be decoded and validated at its end.
        case keepingCompressed(Validation, ContentCoding, [UInt8])
        /// A compressed sequence, decoded as it streams: its items are checked as they come.
        case inflating(Validation, RawInflater)
        /// The bytes do not decode as their `Content-Encoding` says: no client can read the body
        /// the document describes, so that breaks the contract (an over-limit body is only not
        /// validated). What was found before it still counts; nothing after it is read.
        case brokenCoding(before: Verdict, Violation)
        /// Only while its buffers are out being fed (they stay uniquely referenced: never copied).
        case moving

        /// The validator, while the body is read.
        var validation: Validation? {
            switch self {
            case .validating(let validation), .keepingCompressed(let validation, _, _), .inflating(let validation, _):
                validation
            case .unvalidated, .brokenCoding, .moving: nil
            }
        }
    }

    init(
        rule: String, settings: ContractRule, direction: Direction, method: String, check: HeadCheck,
        status: Int = 0, coding: ContentCoding?, limit: Int
    ) {
        self.status = status
        self.rule = rule
        self.settings = settings
        self.direction = direction
        self.method = method
        self.check = check
        self.coding = coding
        self.limit = limit
        if let schema = check.bodySchema {
            let validation = Validation.json(schema.validation(direction: direction))
            body = coding.map { .keepingCompressed(validation, $0, []) } ?? .validating(validation)
        } else if let sequence = check.sequence {
            let validation = Validation.sequence(sequence.validation(direction: direction, limit: limit))
            // A sequence streams: decoded as it comes where the coding allows (gzip, deflate); a
            // brotli one is not validated (holding an endless stream would stall its client).
            if let coding {
                body =
                    RawInflater(coding: coding).map { .inflating(validation, $0) }
                    ?? .unvalidated("a \(coding.rawValue)-coded sequence is not decoded as it streams")
            } else {
                body = .validating(validation)
            }
        } else {
            body = .unvalidated(check.bodyNotValidated)
        }
    }

    /// Whether a body is validated at all.
    var validatesBody: Bool { check.validatesBody }

    /// Why the body is not validated, once that is known (`nil` while it is, or when the contract
    /// describes no body and has nothing to say of it).
    var skipped: String? {
        guard case .unvalidated(let why) = body else { return nil }
        return why
    }

    /// Whether the body is a sequence of items (an event stream, JSON Lines), checked as it
    /// streams: never held for the verdict unless its length is announced.
    var validatesSequence: Bool { check.sequence != nil }

    /// The failure so far, when it already breaks an enforced promise (a sequence's item).
    var enforcedFailureSoFar: ContractFailure? {
        guard let validation = body.validation, validation.hasViolations else { return nil }
        var all = Verdict()
        for violation in headViolations { all.add(violation) }
        all.merge(validation.verdictSoFar)
        let failure = failure(all)
        return enforces(failure) ? failure : nil
    }

    /// Violations that decide the outcome: the contract's, and undocumented parts unless `pass`.
    var headViolations: [Violation] { Self.headViolations(check, settings) }

    /// Whether the head alone breaks an enforced promise.
    var headFailsEnforced: Bool { Self.headFailsEnforced(check, settings, direction) }

    /// Whether `failure` breaks an enforced promise: its direction's mode is `enforce` and it has
    /// violations beyond the undocumented parts that `undocumented: report` only reports, and
    /// beyond what OpenAPI 3.0 says only SHOULD NOT be sent (a readOnly property in a request, a
    /// writeOnly one in a response: a client that sends back what it read is common; Swagger
    /// 2.0's MUST NOT is enforced).
    func enforces(_ failure: ContractFailure) -> Bool {
        let enforced = direction == .response ? settings.onViolation == .enforce : settings.requests == .enforce
        let undocumented = settings.undocumented == .report ? check.undocumented.count : 0
        let shouldNot =
            readsAccessAsShouldNot
            ? failure.violations.count { $0.keyword == "readOnly" || $0.keyword == "writeOnly" } : 0
        return enforced && failure.total > undocumented + shouldNot
    }

    /// The document is OpenAPI 3.x: its readOnly and writeOnly say SHOULD NOT (2.0's: MUST NOT).
    private var readsAccessAsShouldNot: Bool {
        guard case .openAPI(let document)? = settings.loaded?.kind else { return false }
        return document.version != "2.0"
    }

    static func headViolations(_ check: HeadCheck, _ settings: ContractRule) -> [Violation] {
        check.violations + (settings.undocumented == .pass ? [] : check.undocumented)
    }

    static func headFailsEnforced(_ check: HeadCheck, _ settings: ContractRule, _ direction: Direction) -> Bool {
        let enforced = direction == .response ? settings.onViolation == .enforce : settings.requests == .enforce
        return (enforced && !check.violations.isEmpty)
            || (settings.undocumented == .enforce && !check.undocumented.isEmpty)
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        switch body {
        case .validating(var validation):
            body = .moving
            validation.feed(bytes)
            body = .validating(validation)
        case .keepingCompressed(let validation, let coding, var kept):
            guard kept.count + bytes.count <= limit else {
                body = .unvalidated("a compressed body larger than max_transform_body (\(limit) bytes)")
                return
            }
            body = .moving
            kept.append(contentsOf: bytes)
            body = .keepingCompressed(validation, coding, kept)
        case .inflating(var validation, let inflater):
            body = .moving
            let decodes = inflater.feed(bytes) { validation.feed($0) }
            body =
                decodes
                ? .inflating(validation, inflater)
                : .brokenCoding(
                    before: validation.verdictSoFar,
                    Self.codingViolation(coding, detail: "corrupt or truncated data"))
        case .unvalidated, .brokenCoding, .moving:
            return
        }
    }

    /// Whether the body is checked as it streams (a sequence, decoded as it comes when compressed):
    /// an enforced failure can then cut it.
    var checksAsItStreams: Bool {
        guard validatesSequence else { return false }
        if case .keepingCompressed = body { return false }
        return true
    }

    /// How many bytes of the last piece fed come before the item that broke the sequence (the
    /// piece in which the first violation appeared; its whole items can still go out). `nil` for
    /// a compressed body (its pieces are not its items' bytes) or when nothing broke.
    var cleanPrefixOfLastPiece: Int? {
        guard case .validating(.sequence(let sequence)) = body else { return nil }
        return sequence.cleanPrefix
    }

    /// The outcome, settled now without finishing the body (a sequence cut where it broke: the
    /// item cut short is no violation of the origin's).
    func settle(_ failure: ContractFailure) {
        if outcome == nil { outcome = .failed(failure) }
    }

    /// A body that ended early (the client left, the origin broke off): what was found so far, or
    /// not validated when nothing was; `nil` when nothing of the body was checked. Nothing of the
    /// run changes (a fetch that goes on for the cache still finishes it).
    var unfinishedOutcome: Outcome? {
        if let outcome { return outcome }
        var verdict = Verdict()
        for violation in headViolations { verdict.add(violation) }
        switch body {
        case .validating(let validation), .keepingCompressed(let validation, _, _), .inflating(let validation, _):
            verdict.merge(validation.verdictSoFar)
        case .brokenCoding(let before, let violation):
            verdict.merge(before)
            verdict.add(violation)
        case .unvalidated, .moving:
            guard verdict.total > 0 else { return nil }
        }
        return verdict.total > 0
            ? .failed(failure(verdict)) : .notValidated("the body ended early (the exchange was cut short)")
    }

    /// The violation of a body whose `coding` does not decode.
    static func codingViolation(_ coding: ContentCoding?, detail: String) -> Violation {
        Violation(
            pointer: "", keyword: "content-encoding",
            expected: "a body that decodes as \(coding?.rawValue ?? "its Content-Encoding")", found: detail, schema: "")
    }

    /// The end of the body: the outcome.
    @discardableResult
    func finish() -> Outcome {
        if let outcome { return outcome }
        var verdict = Verdict()
        for violation in headViolations { verdict.add(violation) }
        var notValidated: String?
        let ended = body
        body = .moving
        switch ended {
        case .keepingCompressed(var validation, let coding, let kept):
            do {
                let decoded = try coding.decode(kept, limit: limit)
                decoded.withUnsafeBytes { validation.feed($0) }
                verdict.merge(validation.finish())
            } catch {
                switch error {
                case .tooLarge: notValidated = "the \(coding.rawValue) body does not decode: \(error)"
                case .invalid(let detail): verdict.add(Self.codingViolation(coding, detail: detail))
                }
            }
        case .validating(var validation), .inflating(var validation, _):
            if case .sequence(let sequence) = validation, sequence.skippedEvents > 0 {
                notValidated =
                    "\(sequence.skippedEvents) event\(sequence.skippedEvents == 1 ? "" : "s") larger than max_transform_body (\(limit) bytes) not checked"
            }
            verdict.merge(validation.finish())
        case .brokenCoding(let before, let violation):
            verdict.merge(before)
            verdict.add(violation)
        case .unvalidated(let why):
            notValidated = why
        case .moving:
            break
        }
        body = .unvalidated(notValidated)
        let result: Outcome
        if verdict.total > 0 {
            result = .failed(failure(verdict))
        } else if let notValidated {
            result = .notValidated(notValidated)
        } else {
            result = .passed
        }
        outcome = result
        return result
    }

    /// Stops validating the body (it streams on unvalidated); the head checks still count, and so
    /// does a coding found broken.
    func skipBody(_ reason: String) {
        if case .brokenCoding = body { return }
        body = .unvalidated(reason)
    }

    func failure(_ verdict: Verdict) -> ContractFailure {
        Self.failure(verdict, check: check, rule: rule, direction: direction, method: method)
    }

    /// The head's failure alone (enforced before any body).
    func headFailure() -> ContractFailure {
        Self.headFailure(check, settings, rule: rule, direction: direction, method: method)
    }

    static func failure(_ verdict: Verdict, check: HeadCheck, rule: String, direction: Direction, method: String)
        -> ContractFailure
    {
        ContractFailure(
            rule: rule, direction: direction, operationId: check.operationId, method: method, template: check.template,
            violations: verdict.violations, total: verdict.total)
    }

    static func headFailure(
        _ check: HeadCheck, _ settings: ContractRule, rule: String, direction: Direction, method: String
    ) -> ContractFailure {
        var verdict = Verdict()
        for violation in headViolations(check, settings) { verdict.add(violation) }
        return failure(verdict, check: check, rule: rule, direction: direction, method: method)
    }

    /// The verdict as stored with a cache entry: `passed`, `not-validated: why`, or
    /// `failed: N violation(s): /pointer keyword (expected …, found …); …` (the first five).
    static func stored(_ outcome: Outcome) -> String {
        switch outcome {
        case .passed: return "passed"
        case .notValidated(let why): return "not-validated: " + why
        case .failed(let failure):
            let listed = failure.violations.prefix(5).map {
                "\($0.place) \($0.keyword) (expected \($0.expected), found \($0.found))"
            }
            return "failed: \(failure.total) violation\(failure.total == 1 ? "" : "s"): "
                + listed.joined(separator: "; ")
                + (failure.total > 5 ? "; …" : "")
        }
    }

    /// A `Sluice-Validation` member for the outcome.
    /// A request's verdict says `reason="request-contract"`.
    static func mark(_ outcome: Outcome, rule: String, direction: Direction = .response) -> String {
        let reason = direction == .request ? "\"request-contract\"" : "\"contract\""
        return switch outcome {
        case .passed: "passed; reason=\(reason); rule=\(StructuredField.quote(rule))"
        case .failed(let failure):
            "failed; reason=\(reason); violations=\(failure.total); rule=\(StructuredField.quote(rule))"
        case .notValidated(let why):
            "not-validated; reason=\(StructuredField.quote(why)); rule=\(StructuredField.quote(rule))"
        }
    }
}
