import Contract
import Testing

@testable import Sluice

/// RFC 6902 JSON Patch on JSON text: the RFC's Appendix A cases, applied to bytes, and what lies
/// outside the patched values kept byte for byte.
@Suite("JSON Patch")
struct JSONPatchTests {
    static func value(_ json: String) -> JSONPatch.Literal {
        JSONPatch.Literal(try! Value.parse(Array(json.utf8)), text: json)
    }
    static func parsed(_ json: String) -> Value { try! Value.parse(Array(json.utf8)) }

    static func apply(_ document: String, _ operations: [JSONPatch.Operation]) -> Result<String, JSONPatch.Failure> {
        JSONPatch(operations).apply(to: Array(document.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test(
        "RFC 6902 Appendix A: the result is the expected document",
        arguments: [
            (
                #"{"foo":"bar"}"#, JSONPatch.Operation.add(path: "/baz", value: value(#""qux""#)),
                #"{"baz":"qux","foo":"bar"}"#
            ),
            (#"{"foo":["bar","baz"]}"#, .add(path: "/foo/1", value: value(#""qux""#)), #"{"foo":["bar","qux","baz"]}"#),
            (#"{"baz":"qux","foo":"bar"}"#, .remove(path: "/baz"), #"{"foo":"bar"}"#),
            (#"{"foo":["bar","qux","baz"]}"#, .remove(path: "/foo/1"), #"{"foo":["bar","baz"]}"#),
            (
                #"{"baz":"qux","foo":"bar"}"#, .replace(path: "/baz", value: value(#""boo""#)),
                #"{"baz":"boo","foo":"bar"}"#
            ),
            (
                #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
                .move(from: "/foo/waldo", path: "/qux/thud"),
                #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#
            ),
            (
                #"{"foo":["all","grass","cows","eat"]}"#, .move(from: "/foo/1", path: "/foo/3"),
                #"{"foo":["all","cows","eat","grass"]}"#
            ),
            (
                #"{"foo":"bar"}"#, .add(path: "/child", value: value(#"{"grandchild":{}}"#)),
                #"{"foo":"bar","child":{"grandchild":{}}}"#
            ),
            (
                #"{"foo":["bar"]}"#, .add(path: "/foo/-", value: value(#"["abc","def"]"#)),
                #"{"foo":["bar",["abc","def"]]}"#
            ),
            (#"{"foo":null}"#, .add(path: "/foo", value: value("1")), #"{"foo":1}"#),
            (#"{"/":9,"~1":10}"#, .test(path: "/~01", value: value("10")), #"{"/":9,"~1":10}"#),
            (#"{"a":[]}"#, .add(path: "/a/0", value: value("1")), #"{"a":[1]}"#),
            (#"{"a":{}}"#, .copy(from: "/a", path: "/b"), #"{"a":{},"b":{}}"#),
            (#"[1,2]"#, .add(path: "", value: value("{}")), #"{}"#),
        ])
    func appendixA(document: String, operation: JSONPatch.Operation, expected: String) throws {
        let result = try Self.apply(document, [operation]).get()
        #expect(Self.parsed(result) == Self.parsed(expected), "\(result)")
    }

    @Test(
        "Failures leave the document unpatched and say which operation",
        arguments: [
            (#"{"foo":"bar"}"#, JSONPatch.Operation.add(path: "/baz/bat", value: value(#""qux""#)), "does not exist"),
            (#"{"baz":"qux"}"#, .test(path: "/baz", value: value(#""bar""#)), "test failed"),
            (#"{"foo":["bar"]}"#, .add(path: "/foo/5", value: value("1")), "past the end"),
            (#"{"foo":["bar"]}"#, .remove(path: "/foo/01"), "not an array index"),
            (#"{"a":{"b":1}}"#, .move(from: "/a", path: "/a/c"), "into itself"),
            (#"{"a":1"#, .remove(path: "/a"), "container"),
        ])
    func failures(document: String, operation: JSONPatch.Operation, message: String) {
        switch Self.apply(document, [operation]) {
        case .success(let text): Issue.record("patched: \(text)")
        case .failure(let failure):
            #expect(failure.index == 0)
            #expect(failure.message.contains(message), "\(failure.message)")
        }
        // A later failure undoes nothing visible: the patch is all or none.
        let both = Self.apply(#"{"foo":1}"#, [.replace(path: "/foo", value: Self.value("2")), .remove(path: "/nope")])
        #expect(both == .failure(JSONPatch.Failure(index: 1, message: "/nope does not exist")))
    }

    @Test("Bytes outside the patched values stay as the origin wrote them")
    func bytePreserving() throws {
        let document = """
            {
              "id" : 7,   "price": 1.50E+1,
              "name": "caf\\u00e9",
              "tags": [ "a",  "b" ],
              "debug": {"trace": [1,2,3]}
            }
            """
        let result = try Self.apply(
            document,
            [
                .replace(path: "/id", value: Self.value("8")), .remove(path: "/debug"),
                .add(path: "/tags/-", value: Self.value(#""c""#)),
            ]
        ).get()
        #expect(
            result == """
                {
                  "id" : 8,   "price": 1.50E+1,
                  "name": "caf\\u00e9",
                  "tags": [ "a",  "b","c" ]
                }
                """)
    }
}
