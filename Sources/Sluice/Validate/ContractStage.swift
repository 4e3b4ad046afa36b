/// Delivery stage: a response's contract check (``ContractRun``). The body is fed to the streaming
/// validator as it passes; in enforce mode it is held for the verdict (a broken promise answers
/// `502` instead), in report mode a small body whose length is announced is held so that its head
/// can carry the verdict. Past `limits.max_transform_body` the check gives up and the body streams.
/// When a later stage holds the body anyway (a JSON transform), this one does not hold it again:
/// the body is checked as it passes, and an enforced failure still answers before the head left.
final class ContractStage: DeliveryStage {
    /// What the stage does with the body, decided at the head.
    enum Plan: Equatable {
        /// Held for the verdict.
        case hold
        /// Checked as it passes; the verdict reaches the record, not the head.
        case stream
        /// Enforce mode, but the announced length is past the limit: not validated.
        case tooLarge
    }

    private enum Phase {
        case waiting
        case holding(HeldResponse)
        case streaming
        case done
    }

    let run: ContractRun
    let limit: Int
    /// A later stage holds the head and body until the end (``TransformStage``).
    let heldLater: Bool
    let budget: HeldBodyBudget?
    /// What went out after holding and was not taken yet.
    private let releasing = ReleaseSlot<ResponseHead>()
    /// Whether the verdict goes on the head a later stage holds (it would have been held here).
    private var marksHeldHead = false
    /// A body the held-bodies budget let through unheld: an enforced contract cuts it at its end
    /// when broken.
    private var cutsAtEnd = false
    private var phase = Phase.waiting

    init(_ run: ContractRun, limit: Int, heldLater: Bool = false, budget: HeldBodyBudget? = nil) {
        self.budget = budget
        self.run = run
        self.limit = limit
        self.heldLater = heldLater
    }

    /// Enforce mode holds the body for its verdict; report mode holds a small body whose length is
    /// announced (64 KiB at most), so that its head can say the verdict.
    static func plan(_ run: ContractRun, _ response: ResponseHead, limit: Int) -> Plan {
        guard run.validatesBody else { return .stream }
        let length = response.headers[.contentLength].flatMap { Int64($0) }
        if run.settings.onViolation == .enforce {
            if let length, length > Int64(limit) { return .tooLarge }
            // A sequence without a length may never end (an event stream): its items are checked
            // as they pass, and the first broken one cuts it (``body(_:_:_:)``).
            if run.checksAsItStreams, length == nil { return .stream }
            return .hold
        }
        let small = !response.headers.contains(.transferEncoding) && length.map { $0 <= 65536 } == true
        return small ? .hold : .stream
    }

    func head(_ head: ResponseHead, _ next: DeliveryNext<ResponseHead>) {
        switch ContractStage.plan(run, head, limit: limit) {
        case .hold where !heldLater:
            phase = .holding(HeldResponse(head, limit: limit, budget: budget))
            return
        case .hold:
            marksHeldHead = true
        case .tooLarge:
            run.skipBody(JSONBodyDelivery.tooLarge(limit))
            next.note(.mark(ContractRun.mark(.notValidated("body-too-large"), rule: run.rule)))
        case .stream:
            // The stripper holds whatever size or framing: the verdict still reaches the head.
            if heldLater, run.validatesBody { marksHeldHead = true }
            // Nothing of the body is checked (not JSON, no schema, a 204, a HEAD): the head's
            // checks are the whole verdict, so a passing one is said now, as a checked body's is.
            // (A body known not to be checked, a Kubernetes watch stream, says so instead.)
            if !run.validatesBody, run.headViolations.isEmpty {
                let outcome: ContractRun.Outcome = run.skipped.map { .notValidated($0) } ?? .passed
                next.note(.mark(ContractRun.mark(outcome, rule: run.rule)))
            }
        }
        phase = .streaming
        cutsSequence = run.checksAsItStreams && run.settings.onViolation == .enforce && !heldLater
        if cutsSequence { streamedHead = head }
        // Reported head violations mark the head: all of them under `on_violation: report`, the
        // undocumented ones under `undocumented: report` (enforced ones never get this far).
        if run.settings.onViolation == .report || run.settings.undocumented == .report, !run.headViolations.isEmpty {
            next.note(.mark(ContractRun.mark(.failed(run.headFailure()), rule: run.rule)))
        }
        next.head(head)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<ResponseHead>) -> Bool {
        if !releasing.before(push) { return false }
        if case .done = phase { return true }
        guard case .holding(var held) = phase else {
            if cutsSequence { return checkedBeforePassing(bytes, push, next) }
            // Validated once taken: a refused offer comes again.
            let taken = next.body(bytes, push)
            if taken { run.feed(bytes) }
            return taken
        }
        phase = .done  // the enum lets go of the bytes: appended in place, not copied
        if held.append(bytes) {
            run.feed(bytes)
            phase = .holding(held)
            return true
        }
        phase = .streaming
        if held.overBudget {
            // Too many bodies held at once (limits.max_held_bodies), not a body too large: it is
            // still checked as it streams, and an enforced contract cuts a broken one at its end
            // (its head has gone: no 502 any more).
            cutsAtEnd = run.settings.onViolation == .enforce
        } else {
            // Past max_transform_body: what was held goes out unvalidated, the rest streams.
            run.skipBody(held.gaveUp(budget?.total ?? 0))
            next.note(.mark(ContractRun.mark(.notValidated("body-too-large"), rule: run.rule)))
        }
        // Validated once taken: a refused piece comes again, through the streaming path.
        let taken = held.overflow(with: bytes, push, to: next, releasing: releasing)
        if taken { run.feed(bytes) }
        return taken
    }

    /// An enforced sequence that streams (decided at the head): each piece is checked before it
    /// is passed on, and the one in which an item breaks is not, but for the whole items before it:
    /// the response is cut there (the client sees a truncated stream; an event stream's client
    /// drops the unfinished event).
    private var cutsSequence = false
    /// The head of a stream that may be cut (a recording keeps the origin's response as sent).
    private var streamedHead: ResponseHead?

    /// Bytes of a refused offer already checked: it comes again from its first byte.
    private var checkedAhead = 0

    private func checkedBeforePassing(
        _ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<ResponseHead>
    ) -> Bool {
        let fedFrom = checkedAhead
        if checkedAhead < bytes.count {
            run.feed(UnsafeRawBufferPointer(rebasing: bytes[checkedAhead...]))
        }
        checkedAhead = max(checkedAhead, bytes.count)
        if let failure = run.enforcedFailureSoFar {
            phase = .done
            // The whole items before the broken one still go out (they came in the same read).
            var sent = 0
            if let clean = run.cleanPrefixOfLastPiece, fedFrom + clean > 0, fedFrom + clean <= bytes.count {
                sent = fedFrom + clean
                _ = next.body(UnsafeRawBufferPointer(rebasing: bytes[0..<sent]), .beforeCut)
            }
            if let head = streamedHead { next.note(.cut(head, Array(bytes[sent...]))) }
            run.settle(failure)
            next.note(.verdict(.failed(failure), run))
            next.fail(.contractViolation(failure))
            return true
        }
        let taken = next.body(bytes, push)
        if taken { checkedAhead = 0 }
        return taken
    }

    func end(_ next: DeliveryNext<ResponseHead>) {
        let outcome = run.finish()
        next.note(.verdict(outcome, run))
        guard case .holding(let held) = phase else {
            phase = .done
            if heldLater || cutsSequence || cutsAtEnd, case .failed(let failure) = outcome, run.enforces(failure) {
                // (A sequence broken at its end, as a whole: the client never gets that end.)
                return next.fail(.contractViolation(failure))
            }
            // A later stage holds the head (null stripping): the verdict still reaches it.
            if marksHeldHead {
                next.note(.mark(ContractRun.mark(outcome, rule: run.rule)))
            }
            // (A body given up on and still going out: the end follows it.)
            if releasing.endAfter() { return }
            return next.end()
        }
        phase = .done
        if case .failed(let failure) = outcome, run.enforces(failure) {
            next.note(.rejected(held.head, held.bytes))
            return next.fail(.contractViolation(failure))
        }
        next.note(.mark(ContractRun.mark(outcome, rule: run.rule)))
        held.pass(to: next, releasing: releasing)
    }

    func drained() -> Bool { releasing.goOn() }

    func abandon() {
        phase = .done
        releasing.cancel()
    }
}
