import Testing

@testable import Sluice

/// The relay's half-close and idleness as a value: each direction ends once, the far side's end
/// waits for its bytes, and idleness is measured from the last bytes moved.
@Suite("The relay's state")
struct RelayStateTests {
    @Test("Each direction is ended once; the relay is over when both are")
    func halfClose() {
        var state = RelayState(now: 0)
        #expect(!state.isOver)
        let first = state.endUp()
        let second = state.endUp()
        #expect(first)
        #expect(!second, "a second end is not passed on again")
        #expect(state.up == .ended && state.down == .open && !state.isOver)
        let down = state.endDown()
        #expect(down && state.isOver)
    }

    @Test("The far side's end waits as `ending` until it is passed on, and never reopens")
    func farEnding() {
        var state = RelayState(now: 0)
        state.farEnding()
        #expect(state.downEnding && state.down == .ending)
        let ended = state.endDown()
        #expect(ended)
        state.farEnding()
        #expect(state.down == .ended, "an ended direction stays ended")
        #expect(!state.downEnding)
    }

    @Test("The client's end waits as `ending` too, until what it sent went on")
    func clientEnding() {
        var state = RelayState(now: 0)
        state.clientEnding()
        #expect(state.upEnding && !state.isOver)
        let ended = state.endUp()
        #expect(ended && !state.upEnding)
    }

    @Test("Idle means nothing moved for the limit, counted from the last bytes")
    func idleness() {
        let ms: UInt64 = 1_000_000
        var state = RelayState(now: 1_000 * ms)
        #expect(!state.isIdle(now: 1_299 * ms, limit: 300))
        #expect(state.isIdle(now: 1_300 * ms, limit: 300))
        state.moved(now: 1_250 * ms)
        #expect(!state.isIdle(now: 1_300 * ms, limit: 300))
        #expect(state.isIdle(now: 1_550 * ms, limit: 300))
        state.moved(now: 1_100 * ms)
        #expect(state.lastActivity == 1_250 * ms, "time never goes back")
        #expect(!state.isIdle(now: 900 * ms, limit: 0), "a clock reading from before is not idleness")
    }
}
