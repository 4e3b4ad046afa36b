import Foundation
import Sluice
import Testing

@Suite("JSONPrettyPrinter")
struct JSONPrettyPrinterTests {
    static func format(_ text: String) -> String? {
        JSONPrettyPrinter.format(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("Keys keep their order and scalars their exact text; only whitespace changes")
    func keepsOrderAndText() {
        let input = #"{"z":1.50e+10,"a":[true,null,"\u00e9\/"],"m":{},"e":[],"n":{"y":-0.0,"b":"x"}}"#
        let expected = """
            {
              "z": 1.50e+10,
              "a": [
                true,
                null,
                "\\u00e9\\/"
              ],
              "m": {},
              "e": [],
              "n": {
                "y": -0.0,
                "b": "x"
              }
            }
            """
        #expect(Self.format(input) == expected)
        #expect(Self.format(" [ 1 , { } ] ") == "[\n  1,\n  {}\n]")
        #expect(Self.format("\"only\"") == "\"only\"")
        #expect(Self.format(expected) == expected)
    }

    @Test(
        "Invalid JSON is refused", arguments: ["", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "{1:2}", "[1] 2", "[}", "nul"])
    func invalid(text: String) {
        #expect(Self.format(text) == nil)
    }

    @Test("The same values as the input, for random documents")
    func sameValues() throws {
        var generator = SystemRandomNumberGenerator()
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 3 ? 3 : 5), using: &generator) {
            case 0: return Int.random(in: -1000...1000, using: &generator)
            case 1: return ["a", "é\"\\", "", "x\ny"].randomElement(using: &generator)!
            case 2: return [true, false, NSNull()].randomElement(using: &generator)!
            case 3: return (0..<Int.random(in: 0...3, using: &generator)).map { _ in value(depth + 1) }
            default:
                return Dictionary(
                    uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &generator)).map {
                        ("k\($0)", value(depth + 1))
                    })
            }
        }
        for _ in 0..<200 {
            let document = value(0)
            let data = try JSONSerialization.data(withJSONObject: document, options: [.fragmentsAllowed])
            let formatted = try #require(JSONPrettyPrinter.format(Array(data)))
            let reread = try JSONSerialization.jsonObject(with: Data(formatted), options: [.fragmentsAllowed])
            let original = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
            #expect(
                try JSONSerialization.data(withJSONObject: reread, options: options)
                    == JSONSerialization.data(withJSONObject: original, options: options))
        }
    }
}
