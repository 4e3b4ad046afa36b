/// Vary (RFC 9111 §4.1): which request fields select a stored response, and how their values
/// are compared.
extension CachePolicy {
    /// The Vary'd request header values (§4.1), normalised as their grammar allows, in the order
    /// of the `Vary` field names: see ``selector(_:values:)``.
    /// A field the request sent empty (`name:` and a NUL, which no field value holds) is not one
    /// it did not send (`name:`, the form entries were always stored with): an absent
    /// `Accept-Encoding` accepts any coding, an empty one only identity (RFC 9110 §12.5.3).
    /// An opaque value's bytes past ASCII count as themselves, never as the UTF-8 text that
    /// reads the same (``HTTPFields/Field/comparable(_:)``).
    static func variant(names: [String], request: HTTPFields) -> String {
        names.map { name in
            var values = request.values(name)
            if request.fields.contains(where: { $0.opaque }) {
                values = request.fields.filter { $0.hasName(name) }.map(HTTPFields.Field.comparable)
            }
            let selected = selector(name, values: values)
            return name + ":" + (selected.isEmpty && !values.isEmpty ? "\u{0}" : selected)
        }.joined(separator: "\n")
    }

    /// One nominated field's value as the cache compares it: its lines combined as one list,
    /// whitespace around commas and at the ends dropped and inner runs collapsed; for the
    /// content-negotiation fields (`Accept`, `Accept-Charset`, `Accept-Encoding`,
    /// `Accept-Language`, whose media types, tokens, codings and language tags are
    /// case-insensitive) those and parameter names are lower-cased (parameter values are not:
    /// RFC 9110 §8.3.2), `q` written one way (`q=1` is implied) and members ordered by weight
    /// then text: members of equal weight are equally acceptable (RFC 9110 §12.4.2), so `en, de`
    /// selects what `de, en` does, as the cache-tests suite's optimal cache does. (RFC 9110
    /// §12.5.4 notes that some servers read the order of `Accept-Language` as priority; browsers
    /// send explicit weights, which are kept apart.)
    static func selector(_ name: String, values: [String]) -> String {
        var members = values.flatMap(listMembers)
        if negotiationFields.contains(name) {
            let weighted = members.map(weightedMember)
            members = weighted.sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.text < $1.text }.map {
                $0.weight == 1000 ? $0.text : $0.text + ";q=" + qvalue($0.weight)
            }
        }
        return members.joined(separator: ",")
    }

    private static let negotiationFields: Set<String> = [
        "accept", "accept-charset", "accept-encoding", "accept-language",
    ]

    /// The members of a list-based field value: split at commas outside quoted strings, trimmed,
    /// inner whitespace runs collapsed to one space, empty members dropped (RFC 9110 §5.6.1).
    private static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        var current = ""
        var quoted = false
        var pendingSpace = false
        func close() {
            if !current.isEmpty { members.append(current) }
            current = ""
            pendingSpace = false
        }
        for c in value {
            if c == "\"" { quoted.toggle() }
            if !quoted, c == "," {
                close()
            } else if !quoted, c == " " || c == "\t" {
                pendingSpace = !current.isEmpty
            } else {
                if pendingSpace { current.append(" ") }
                pendingSpace = false
                current.append(c)
            }
        }
        close()
        return members
    }

    /// A negotiation member without spaces around `;` and `=`, its value and parameter names
    /// lower-cased (parameter values as they are), and its weight in thousandths (`q` absent =
    /// 1000; RFC 9110 §12.4.2).
    private static func weightedMember(_ member: String) -> (text: String, weight: Int) {
        var parts: [String] = []
        var weight = 1000
        for piece in parameters(member) {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingOWS() }
            guard let key = pair.first?.lowercased(), !key.isEmpty else { continue }
            if parts.isEmpty {
                parts.append(pair.count == 2 ? key + "=" + pair[1] : key)
            } else if key == "q", pair.count == 2, let q = thousandths(pair[1]) {
                weight = q
            } else {
                parts.append(pair.count == 2 ? key + "=" + pair[1] : key)
            }
        }
        return (parts.joined(separator: ";"), weight)
    }

    /// A member's pieces between semicolons outside quoted strings.
    private static func parameters(_ member: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = member.startIndex
        var quoted = false
        var index = member.startIndex
        while index < member.endIndex {
            let c = member[index]
            if c == "\"" {
                quoted.toggle()
            } else if c == "\\", quoted {
                index = member.index(after: index)
                if index == member.endIndex { break }
            } else if c == ";", !quoted {
                pieces.append(member[start..<index])
                start = member.index(after: index)
            }
            index = member.index(after: index)
        }
        pieces.append(member[start...])
        return pieces
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` in thousandths.
    private static func thousandths(_ text: String) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        while fraction.count < 3 { fraction += "0" }
        let value = (whole == "1" ? 1000 : 0) + Int(fraction)!
        return value <= 1000 ? value : nil
    }

    private static func qvalue(_ weight: Int) -> String {
        weight == 0 ? "0" : "0." + String(String(weight + 1000).dropFirst())
    }

    /// Every `Vary` line's field names combined, lower-cased, without duplicates.
    static func varyNames(_ headers: HTTPFields) -> [String] {
        var names: [String] = []
        for name in headers.tokens(.vary) where !names.contains(name) { names.append(name) }
        return names
    }
}
