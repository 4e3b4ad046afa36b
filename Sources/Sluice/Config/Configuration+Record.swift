/// `record:` and `replay:`: sessions kept in a recording and answered from one.
extension Configuration {
    public struct Record: Sendable, Equatable {
        /// The recording written (`nil`: not recording).
        public var file: String?
        /// Which requests are recorded (empty: all).
        public var match: [URLPattern] = []
        /// Keep `Authorization`, `Cookie` and `Set-Cookie` values (redacted by default).
        public var keepCredentials = false
        /// The most bytes kept of each body; a longer body is kept cut (and not replayed).
        public var maxBody: Int64 = 1 << 20
        /// The most the recording file may grow to (0: until the disk is full).
        public var maxSize: Int64 = 0

        public init() {}
    }

    public struct Replay: Sendable, Equatable {
        /// The recording answered from (`nil`: not replaying).
        public var file: String?
        /// A request the recording does not hold: a `504` problem, or forwarded.
        public var onMiss = OnMiss.fail
        /// Request header fields whose values must match too (lower case).
        public var matchHeaders: [String] = []
        /// Whether the request body's digest must match.
        public var matchBody = true

        public enum OnMiss: String, Sendable, Equatable {
            case fail, forward
        }

        public init() {}
    }
}

/// `host` or `host/path` globs (`api.example.com/v1/**`, `*.example.com`).
public struct URLPattern: Sendable, Equatable, CustomStringConvertible {
    public let host: Glob
    public let path: Glob?

    public var description: String { host.text + (path.map { $0.text } ?? "") }

    public static func parse(_ text: String) -> Result<URLPattern, GlobError> {
        let slash = text.firstIndex(of: "/")
        let hostText = slash.map { String(text[..<$0]) } ?? text
        let host: Glob
        switch Glob.parse(hostText.isEmpty ? "*" : hostText, kind: .host) {
        case .success(let glob): host = glob
        case .failure(let error): return .failure(error)
        }
        guard let slash else { return .success(URLPattern(host: host, path: nil)) }
        switch Glob.parse(String(text[slash...]), kind: .path) {
        case .success(let glob): return .success(URLPattern(host: host, path: glob))
        case .failure(let error): return .failure(error)
        }
    }

    public func matches(host subject: String, path subjectPath: String) -> Bool {
        host.matches(subject) && (path?.matches(subjectPath) ?? true)
    }
}
