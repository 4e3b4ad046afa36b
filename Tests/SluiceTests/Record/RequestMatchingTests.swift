import Contract
import Testing

@testable import Sluice

/// The pure parts of recording and replay: URL matching keys, HAR times, the diff of JSON values.
@Suite("Recording: matching, HAR times, diffs")
struct RequestMatchingTests {
    @Test(
        "URL text and a parsed target give the same key: case, default port and query order do not matter",
        arguments: [
            ("http://Example.COM:80/a/b?y=2&x=1", "http://example.com/a/b?x=1&y=2"),
            ("https://api.example:443/v1?q=1", "https://api.example/v1?q=1"),
            ("http://127.0.0.1:8080/?b&a", "http://127.0.0.1:8080/?a&b"),
            ("http://h/p#frag", "http://h/p"),
            ("http://h", "http://h/"),
        ])
    func keys(text: String, expected: String) throws {
        #expect(RequestURL(text).normalized == expected)
        let target = try #require(TargetURL(text.split(separator: "#")[0].description))
        #expect(RequestURL(target).normalized == expected)
    }

    @Test("A HAR form given as postData.params alone gets its urlencoded body back; another kind is skipped, said")
    func harFormParams() throws {
        func har(_ postData: String) -> [UInt8] {
            Array(
                """
                {"log": {"entries": [{"startedDateTime": "2026-11-26T09:01:46Z", "time": 5,
                  "request": {"method": "POST", "url": "http://a.example/form", "headers": [], "postData": \(postData)},
                  "response": {"status": 200, "headers": [], "content": {"text": "ok"}}}]}}
                """.utf8)
        }
        let form = try HAR.read(
            har(
                #"{"mimeType": "application/x-www-form-urlencoded; charset=UTF-8", "params": [{"name": "a b", "value": "1&2"}, {"name": "é", "value": "x*y~"}, {"name": "flag"}]}"#
            ))
        #expect(
            String(decoding: form.exchanges.first?.requestBody ?? [], as: UTF8.self) == "a+b=1%262&%C3%A9=x*y%7E&flag")
        let multipart = try HAR.read(
            har(#"{"mimeType": "multipart/form-data", "params": [{"name": "f", "value": "1"}]}"#))
        #expect(multipart.exchanges.isEmpty && multipart.skipped.first?.contains("no urlencoded form") == true)
    }

    @Test("ISO 8601 times as HAR writers spell them")
    func times() {
        #expect(HAR.parseTime("1970-01-01T00:00:00Z") == 0)
        #expect(HAR.parseTime("2026-11-26T09:01:46.250Z") == 1_795_683_706.25)
        #expect(HAR.parseTime("2026-11-26T10:01:46.250+01:00") == 1_795_683_706.25)
        #expect(HAR.parseTime("2026-11-26T09:01:46.250123456Z")! - 1_795_683_706.250123456 < 1e-6)
        #expect(HAR.parseTime("2026-11-26 09:01:46Z") == 1_795_683_706)
        #expect(HAR.parseTime("26/11/2026") == nil)
        #expect(HAR.parseTime("2026-13-26T09:01:46Z") == nil)
        #expect(HAR.formatTime(1_795_683_706.25) == "2026-11-26T09:01:46.250Z")
    }

    @Test("JSON bodies differ by pointer: changed, added, removed, in arrays and objects; ignored pointers skipped")
    func jsonDiff() throws {
        let a = try Value.parse(Array(#"{"a":1,"b":{"c":[1,2,3]},"gone":true,"n":1.0,"x/y":0}"#.utf8))
        let b = try Value.parse(Array(#"{"a":2,"b":{"c":[1,5]},"new":null,"n":1,"x/y":1}"#.utf8))
        var out: [String] = []
        RecordingDiff.json(a, b, at: "", ignoring: ["/a"], into: &out)
        #expect(
            out == [
                "/b/c/1: 2 → 5", "/b/c/2: removed (was 3)", "/gone: removed (was true)", "/x~1y: 0 → 1",
                "/new: added null",
            ])
    }
}
