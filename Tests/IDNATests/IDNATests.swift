import IDNA
import Testing

@Suite("IDNA (libidn2)")
struct IDNATests {
    @Test(
        "Labels valid under IDNA2008 lookup rules",
        arguments: [
            ("example", true), ("실례", true), ("bücher", true), ("xn--bcher-kva", true),
            // Upper case is DISALLOWED in a U-label (no UTS 46 mapping)
            ("Bücher", false),
            // U+302E HANGUL SINGLE DOT TONE MARK is DISALLOWED
            ("\u{302E}실례", false),
            // A label that starts with a combining mark
            ("\u{0903}hello", false),
            // Invalid Punycode
            ("xn--X", false),
            ("", false),
        ])
    func labels(label: String, valid: Bool) {
        #expect(IDNA.isValidLabel(label) == valid)
    }

    @Test("A-labels decode to their U-labels; broken Punycode is nil")
    func decode() {
        #expect(IDNA.decode(aLabel: "xn--bcher-kva") == "bücher")
        #expect(IDNA.decode(aLabel: "XN--BCHER-KVA") == "BüCHER", "ASCII keeps its case")
        #expect(IDNA.lookup("bücher") == "xn--bcher-kva")
        #expect(IDNA.lookup("cafe\u{301}") == nil, "not in NFC")
        #expect(IDNA.lookup("cafe\u{301}", normalizing: true) == "xn--caf-dma")
        #expect(IDNA.decode(aLabel: "xn--X") == nil)
    }
}
