/// A glob for hosts or paths.
///
/// Hosts (`kind: .host`): `*` matches any run of characters (dots included), `?` one character;
/// compared case-insensitively. Paths (`kind: .path`): `*` matches within one segment, `**` across
/// segments, `?` one character other than `/`; a trailing `/**` also matches the bare prefix
/// (`/v1/**` matches `/v1`).
public struct Glob: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable { case host, path }

    enum Token: Sendable, Equatable {
        case literal(UInt8)
        case any  // ?
        case star  // * (within a segment for paths)
        case globstar  // ** (paths only)
        case globstarSlash  // **/ (paths only): nothing, or any run of segments ending in /
    }

    public let text: String
    public let kind: Kind
    let tokens: [Token]
    /// A faster equivalent for the common pattern shapes.
    let shape: Shape

    enum Shape: Sendable, Equatable {
        /// No wildcard: the whole subject equals these bytes.
        case exact([UInt8])
        /// `/prefix/**`: the subject is `/prefix` or starts with `/prefix/` (bytes include the slash).
        case underPrefix([UInt8])
        /// `*suffix` (hosts): the subject ends with these bytes.
        case suffix([UInt8])
        /// Anything else: the token automaton.
        case general
    }

    init(text: String, kind: Kind, tokens: [Token]) {
        self.text = text
        self.kind = kind
        self.tokens = tokens
        func literals(_ slice: ArraySlice<Token>) -> [UInt8]? {
            var bytes: [UInt8] = []
            for token in slice {
                guard case .literal(let byte) = token else { return nil }
                bytes.append(byte)
            }
            return bytes
        }
        if let bytes = literals(tokens[...]) {
            shape = .exact(bytes)
        } else if kind == .path, tokens.last == .globstar, let bytes = literals(tokens.dropLast()), bytes.last == 0x2F {
            shape = .underPrefix(bytes)
        } else if kind == .host, tokens.first == .star, let bytes = literals(tokens.dropFirst()) {
            shape = .suffix(bytes)
        } else {
            shape = .general
        }
    }

    public var description: String { text }

    /// Parses a glob, or explains what is wrong with it.
    /// Why a rule's or a breakpoint's host pattern with a port (`127.0.0.1:8080`) would never
    /// match: they compare the host without its port. (`tls.intercept` entries take a port; other
    /// host lists keep their own readings.)
    public static func portRefusal(_ text: String) -> GlobError? {
        guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon || text.hasPrefix("[") else {
            return nil
        }
        let port = text[text.index(after: colon)...]
        guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }) || port == "*" else { return nil }
        return GlobError("a host pattern matches the host without its port: write \(text[..<colon]), not \(text)")
    }

    public static func parse(_ text: String, kind: Kind) -> Result<Glob, GlobError> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return .failure(GlobError("an empty pattern")) }
        if let bad = bytes.first(where: { "[]{}\\ \t".utf8.contains($0) || $0 < 0x20 || $0 == 0x7F }) {
            return .failure(
                GlobError("\"\(Character(UnicodeScalar(bad)))\" is not supported (only *, ** and ? are wildcards)"))
        }
        var tokens: [Token] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "*") {
                var run = 1
                while index + run < bytes.count, bytes[index + run] == UInt8(ascii: "*") { run += 1 }
                switch (kind, run) {
                case (_, 1): tokens.append(.star)
                case (.path, 2):
                    let before = index == 0 || bytes[index - 1] == UInt8(ascii: "/")
                    let after = index + 2 == bytes.count || bytes[index + 2] == UInt8(ascii: "/")
                    guard before, after else {
                        return .failure(GlobError("** must be a whole path segment, as in /v1/** or /**/x"))
                    }
                    if index + 2 < bytes.count {
                        tokens.append(.globstarSlash)
                        index += 3
                        continue
                    }
                    tokens.append(.globstar)
                default:
                    return .failure(
                        GlobError(kind == .host ? "use a single * in host patterns" : "*** is not a pattern"))
                }
                index += run
                continue
            }
            if byte == UInt8(ascii: "?") {
                tokens.append(.any)
            } else {
                tokens.append(.literal(kind == .host ? lowercase(byte) : byte))
            }
            index += 1
        }
        switch kind {
        case .host:
            if bytes.contains(UInt8(ascii: "/")) { return .failure(GlobError("a host pattern cannot contain /")) }
        case .path:
            guard bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "*") else {
                return .failure(GlobError("a path pattern starts with /"))
            }
        }
        return .success(Glob(text: text, kind: kind, tokens: tokens))
    }

    /// Whether `subject` matches the whole pattern.
    public func matches(_ subject: String) -> Bool {
        var subject = subject
        return subject.withUTF8 { matches(bytes: $0) }
    }

    func matches(bytes whole: UnsafeBufferPointer<UInt8>) -> Bool {
        var bytes = whole
        if kind == .path, let query = whole.firstIndex(of: UInt8(ascii: "?")) {
            bytes = UnsafeBufferPointer(rebasing: whole[..<query])
        }
        switch shape {
        case .exact(let literal):
            return bytes.count == literal.count && Glob.equal(bytes, from: 0, literal, kind: kind)
        case .underPrefix(let prefix):
            if bytes.count == prefix.count - 1 { return Glob.equal(bytes, from: 0, prefix.dropLast(), kind: kind) }
            return bytes.count >= prefix.count && Glob.equal(bytes, from: 0, prefix[...], kind: kind)
        case .suffix(let suffix):
            return bytes.count >= suffix.count
                && Glob.equal(bytes, from: bytes.count - suffix.count, suffix[...], kind: kind)
        case .general:
            break
        }
        // `/prefix/**` also matches `/prefix`.
        if kind == .path, tokens.count >= 2, tokens[tokens.count - 1] == .globstar,
            tokens[tokens.count - 2] == .literal(UInt8(ascii: "/")),
            Glob.run(Array(tokens.dropLast(2)), bytes, kind: kind)
        {
            return true
        }
        return Glob.run(tokens, bytes, kind: kind)
    }

    /// Whether `bytes[from...]` starts with `literal` (hosts fold ASCII case; literals are lower-case).
    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, from: Int, _ literal: ArraySlice<UInt8>, kind: Kind
    ) -> Bool {
        var index = from
        for expected in literal {
            let byte = kind == .host ? lowercase(bytes[index]) : bytes[index]
            if byte != expected { return false }
            index += 1
        }
        return true
    }

    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, from: Int, _ literal: [UInt8], kind: Kind
    ) -> Bool { equal(bytes, from: from, literal[...], kind: kind) }

    /// Dynamic programming over (token, byte): linear in both, no backtracking blow-up.
    private static func run(_ tokens: [Token], _ bytes: UnsafeBufferPointer<UInt8>, kind: Kind) -> Bool {
        // reachable[j]: the tokens so far can consume exactly bytes[0..<j].
        var reachable = [Bool](repeating: false, count: bytes.count + 1)
        reachable[0] = true
        for token in tokens {
            var next = [Bool](repeating: false, count: bytes.count + 1)
            switch token {
            case .literal(let expected):
                for j in 0..<bytes.count where reachable[j] {
                    let byte = kind == .host ? lowercase(bytes[j]) : bytes[j]
                    if byte == expected { next[j + 1] = true }
                }
            case .any:
                for j in 0..<bytes.count where reachable[j] {
                    if kind == .host || bytes[j] != UInt8(ascii: "/") { next[j + 1] = true }
                }
            case .globstarSlash:
                var open = false
                for j in 0...bytes.count {
                    if reachable[j] { next[j] = true }
                    if j > 0, open, bytes[j - 1] == UInt8(ascii: "/") { next[j] = true }
                    if reachable[j] { open = true }
                }
            case .star, .globstar:
                let crossesSlash = token == .globstar || kind == .host
                var open = false
                for j in 0...bytes.count {
                    if reachable[j] { open = true }
                    if open { next[j] = true }
                    if j < bytes.count, !crossesSlash, bytes[j] == UInt8(ascii: "/") { open = false }
                }
            }
            reachable = next
            if !reachable.contains(true) { return false }
        }
        return reachable[bytes.count]
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

/// Why a glob was refused.
public struct GlobError: Error, Sendable, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}
