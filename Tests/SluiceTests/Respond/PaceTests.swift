import Testing

@testable import Sluice

/// Pins down how a `faults.bandwidth` rate turns elapsed time into bytes that may go.
@Suite("Pace: the bytes a bandwidth fault lets go")
struct PaceTests {
    /// One second in monotonic nanoseconds.
    let second: UInt64 = 1_000_000_000

    @Test("Credit accrues at the rate from the moment the pace starts, and unspent credit carries over")
    func accrues() {
        let start = 7 * second
        var pace = Pace(bytesPerSecond: 1000, now: start)
        #expect(pace.allowance(now: start) == 0, "nothing may go before any time has passed")
        #expect(pace.allowance(now: start + second / 4) == 250)
        #expect(pace.allowance(now: start + second / 2) == 500)
        #expect(pace.allowance(now: start + second / 2) == 500, "asking again at the same time adds nothing")
    }

    @Test("Credit is capped at one second's worth, however long the pace was idle")
    func capped() {
        var pace = Pace(bytesPerSecond: 1000, now: 0)
        #expect(pace.allowance(now: 60 * second) == 1000)
        pace.spend(1000)
        #expect(pace.allowance(now: 60 * second) == 0)
        #expect(pace.allowance(now: 60 * second + second / 2) == 500, "after a burst, back to the rate")
    }

    @Test("Spending takes from the credit; an overspend is paid back before more may go")
    func spending() {
        var pace = Pace(bytesPerSecond: 1000, now: 0)
        #expect(pace.allowance(now: second / 2) == 500)
        pace.spend(300)
        #expect(pace.allowance(now: second / 2) == 200)
        pace.spend(500)
        #expect(pace.allowance(now: second / 2 + second / 4) <= 0, "300 owed, 250 earned")
        #expect(pace.allowance(now: second) == 200)
    }

    @Test("Fractions of a byte are kept between allowances, not lost to rounding")
    func fractions() {
        var pace = Pace(bytesPerSecond: 3, now: 0)
        #expect(pace.allowance(now: second / 2) == 1, "1.5 bytes earned: one may go")
        pace.spend(1)
        #expect(pace.allowance(now: second) == 2, "the half byte left plus 1.5 more")
    }

    @Test("A rate below one byte a second is taken as one; the wait between slices is the shaper's tick")
    func clamped() {
        var zero = Pace(bytesPerSecond: 0, now: 0)
        #expect(zero.bytesPerSecond == 1)
        #expect(zero.allowance(now: 10 * second) == 1)
        #expect(Pace(bytesPerSecond: -5, now: 0).bytesPerSecond == 1)
        #expect(Pace(bytesPerSecond: 2048, now: 0).bytesPerSecond == 2048)
        #expect(zero.wait == ShapeStage.tick)
    }
}
