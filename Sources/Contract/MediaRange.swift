/// Media types, as OpenAPI and Sluice read them. On the bytes: these run for every response of a
/// rule with a contract.
public enum MediaRange {
    /// `application/json`, `application/problem+json`, `text/json` (parameters and case ignored).
    public static func isJSON(_ media: String) -> Bool {
        let bare = bare(media)
        return bare == "application/json" || bare == "text/json" || (bare.utf8.count > 5 && bare.hasSuffix("+json"))
    }

    /// Whether a document's media type or range takes JSON bodies: a JSON type, or a range that
    /// covers one (`application/*`, `text/*`, `*/*`), whose schema applies to a JSON body.
    public static func coversJSON(_ range: String) -> Bool {
        if isJSON(range) { return true }
        let bare = bare(range)
        return bare == "*/*" || bare == "application/*" || bare == "text/*" || bare.hasSuffix("/*+json")
    }

    /// The index of the range among `ranges` (a document's `content` keys) that takes `media`, a
    /// message's type: the same type, a suffix range (`application/*+json`, common in real
    /// documents though not in RFC 9110), `type/*`, then `*/*`; `nil` when none does.
    public static func pick(_ media: String, from ranges: [String]) -> Int? {
        let media = bare(media)
        let type = media.firstIndex(of: "/").map { String(media[..<$0]) } ?? media
        let ranges = ranges.map(bare)
        let suffixRange = media.lastIndex(of: "+").map { type + "/*" + media[$0...] }
        return ranges.firstIndex(of: media) ?? suffixRange.flatMap { ranges.firstIndex(of: $0) }
            ?? ranges.firstIndex(of: type + "/*") ?? ranges.firstIndex(of: "*/*")
    }

    /// `type/subtype` in lower case, without parameters or surrounding blanks
    /// (`Application/JSON; charset=utf-8` → `application/json`).
    public static func bare(_ media: String) -> String {
        var media = media
        return media.withUTF8 { bytes in
            var start = 0
            var end = bytes.firstIndex(of: 0x3B) ?? bytes.count
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            let lowered = bytes[start..<end].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            return String(decoding: lowered, as: UTF8.self)
        }
    }
}
