import Testing

@testable import Sluice

@Suite("Client idle timeout")
struct ClientConnectionTimeoutsTests {
    @Test("The idle timeout kept through a bodiless exchange goes on only when the exchange began moments ago")
    func keptTimeoutFits() {
        let second: UInt64 = 1_000_000_000
        let minute = 60_000
        // Under a 64th of the period since it started: it goes on.
        #expect(
            ClientConnection.idleTimeoutFits(since: 10 * second, now: 10 * second + 1_000_000, idleMilliseconds: minute)
        )
        #expect(
            ClientConnection.idleTimeoutFits(
                since: 10 * second, now: 10 * second + 900_000_000, idleMilliseconds: minute))
        // Longer: it starts again from the end of the response.
        #expect(
            !ClientConnection.idleTimeoutFits(
                since: 10 * second, now: 10 * second + 950_000_000, idleMilliseconds: minute))
        #expect(!ClientConnection.idleTimeoutFits(since: 10 * second, now: 11 * second, idleMilliseconds: minute))
        // No idle timeout: nothing to keep.
        #expect(!ClientConnection.idleTimeoutFits(since: 10 * second, now: 10 * second, idleMilliseconds: 0))
    }
}
