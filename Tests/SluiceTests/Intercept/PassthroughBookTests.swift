import Testing

@testable import Sluice

@Suite("Passthrough windows after refused certificates")
struct PassthroughBookTests {
    let curl = PassthroughBook.Key(client: "127.0.0.1", host: "api.example", fingerprint: "t13d3112h2_aaa_bbb")
    let browser = PassthroughBook.Key(client: "127.0.0.1", host: "api.example", fingerprint: "t13d1516h2_ccc_ddd")

    @Test("Two refusals within a minute start a window for that fingerprint only; it ends on time")
    func twoRefusals() {
        var book = PassthroughBook(window: 600)
        #expect(book.refused(curl, now: 100) == .counted(1))
        #expect(!book.isBlind(curl, now: 101))
        #expect(book.refused(curl, now: 150) == .started(until: 750))
        #expect(book.isBlind(curl, now: 151))
        #expect(!book.isBlind(browser, now: 151), "another client on the same address")
        #expect(book.entries(now: 200).map(\.key) == [curl])
        #expect(!book.isBlind(curl, now: 750))
        #expect(book.entries(now: 750).isEmpty)
    }

    @Test("Refusals more than a minute apart do not add up")
    func spreadOut() {
        var book = PassthroughBook(window: 600)
        #expect(book.refused(curl, now: 0) == .counted(1))
        #expect(book.refused(curl, now: 61) == .counted(1))
        #expect(book.refused(curl, now: 90) == .started(until: 690))
    }

    @Test("A completed handshake within the window means not pinning; after the window, it counts again")
    func completedHandshake() {
        var book = PassthroughBook(window: 600)
        book.completedHandshake(curl, now: 0)
        #expect(book.refused(curl, now: 10) == .trustedRecently)
        #expect(book.refused(curl, now: 11) == .trustedRecently)
        #expect(!book.isBlind(curl, now: 12))
        #expect(book.refused(browser, now: 12) == .counted(1), "another fingerprint is not vouched for")
        #expect(book.refused(curl, now: 700) == .counted(1))
        #expect(book.refused(curl, now: 701) == .started(until: 1301))
    }

    @Test("Clearing by host or all; off when the window is 0")
    func clearing() {
        var book = PassthroughBook(window: 600)
        let other = PassthroughBook.Key(client: "127.0.0.1", host: "other.example", fingerprint: "x")
        for key in [curl, other] {
            _ = book.refused(key, now: 0)
            _ = book.refused(key, now: 1)
        }
        #expect(book.clear(host: "API.example") == 1)
        #expect(!book.isBlind(curl, now: 2) && book.isBlind(other, now: 2))
        #expect(book.clear(host: nil) == 1)
        var off = PassthroughBook(window: 0)
        #expect(off.refused(curl, now: 0) == .off)
        #expect(off.refused(curl, now: 1) == .off)
        #expect(!off.isBlind(curl, now: 2))
    }

    @Test("A client given the CA has its windows ended and its refusals forgotten; other clients keep theirs")
    func clearingByClient() {
        var book = PassthroughBook(window: 600)
        let phone = PassthroughBook.Key(client: "192.168.1.20", host: "api.example", fingerprint: "app")
        let laptop = PassthroughBook.Key(client: "192.168.1.30", host: "api.example", fingerprint: "app")
        for key in [phone, laptop] {
            _ = book.refused(key, now: 0)
            _ = book.refused(key, now: 1)
        }
        let other = PassthroughBook.Key(client: "192.168.1.20", host: "other.example", fingerprint: "app")
        _ = book.refused(other, now: 2)
        #expect(book.clear(client: "192.168.1.20") == 1)
        #expect(!book.isBlind(phone, now: 3) && book.isBlind(laptop, now: 3))
        #expect(book.refused(other, now: 4) == .counted(1), "its refusal before the CA is forgotten")
    }
}
