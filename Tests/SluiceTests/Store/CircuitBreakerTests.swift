import Testing

@testable import Sluice

/// The shared tier's breaker: when it trips, when it says so, how long it waits, and what a
/// connection resets, with the clock given.
@Suite("The shared tier's circuit breaker")
struct CircuitBreakerTests {
    @Test("Two failures keep the tier in; the third takes it out and asks for a retry in a second")
    func threshold() {
        var breaker = CircuitBreaker()
        #expect(breaker.failed("timeout", connectionLost: false, now: 10) == .stays)
        #expect(breaker.failed("timeout", connectionLost: false, now: 10.1) == .stays)
        #expect(breaker.failed("timeout", connectionLost: false, now: 10.2) == .out(announce: true, retryIn: 1))
        #expect(breaker.health == .down(reason: "timeout"))
        #expect(breaker.retryAt == 11.2)
    }

    @Test("A lost connection takes it out at once; a success in between resets the count")
    func lostConnection() {
        var breaker = CircuitBreaker()
        _ = breaker.failed("slow", connectionLost: false, now: 0)
        _ = breaker.failed("slow", connectionLost: false, now: 0)
        breaker.succeeded()
        #expect(breaker.failed("slow", connectionLost: false, now: 0) == .stays)
        #expect(breaker.failed("reset by peer", connectionLost: true, now: 0) == .out(announce: true, retryIn: 1))
    }

    @Test("While a retry is waited for, more failures change the reason but are not announced or rescheduled")
    func whileDown() {
        var breaker = CircuitBreaker()
        _ = breaker.failed("refused the credentials", connectionLost: true, now: 0)
        #expect(
            breaker.failed("the subscription was lost", connectionLost: true, now: 0.5)
                == .out(announce: false, retryIn: nil))
        #expect(breaker.health == .down(reason: "the subscription was lost"))
    }

    @Test(
        "A connection that answers brings the tier back, but the pauses start over only with a lookup answered in time")
    func flapping() {
        var breaker = CircuitBreaker()
        _ = breaker.failed("lost", connectionLost: true, now: 0)
        breaker.retrying()
        #expect(breaker.connected().cameBack)
        // Lookups time out again: three in a row, out, and the pause has grown.
        _ = breaker.failed("slow", connectionLost: false, now: 2)
        _ = breaker.failed("slow", connectionLost: false, now: 2)
        #expect(breaker.failed("slow", connectionLost: false, now: 2) == .out(announce: true, retryIn: 2))
        breaker.retrying()
        _ = breaker.connected()
        breaker.succeeded()
        #expect(breaker.backoff == 1)
    }

    @Test("Each failed retry waits twice as long, up to 30 s; a connection says it came back")
    func backoff() {
        var breaker = CircuitBreaker()
        var now = 0.0
        var waits: [Double] = []
        for _ in 0..<8 {
            guard case .out(_, let retryIn?) = breaker.failed("down", connectionLost: true, now: now) else {
                Issue.record("no retry scheduled")
                return
            }
            waits.append(retryIn)
            now += retryIn
            breaker.retrying()
        }
        #expect(waits == [1, 2, 4, 8, 16, 30, 30, 30])
        #expect(breaker.attempts == 9)
        let change = breaker.connected()
        #expect(change.cameBack && change.becameUp)
        #expect(breaker.health == .up && breaker.backoff == 30 && breaker.retryAt == nil)
        breaker.succeeded()
        #expect(breaker.backoff == 1)
        let again = breaker.connected()
        #expect(!again.cameBack && !again.becameUp)
        // The first connection is not a comeback, but it does bring the tier up.
        var fresh = CircuitBreaker()
        let first = fresh.connected()
        #expect(!first.cameBack && first.becameUp)
    }
}
