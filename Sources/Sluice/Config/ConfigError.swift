/// A configuration problem, with the key and line it is about.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted key (`limits.max_connections`), or empty for syntax errors.
    public var key: String
    /// 1-based line in the file, when known.
    public var line: Int?
    /// What is wrong.
    public var message: String
    /// The file, when loaded from one.
    public var file: String?

    public init(key: String, line: Int?, message: String, file: String? = nil) {
        self.key = key
        self.line = line
        self.message = message
        self.file = file
    }

    public var description: String {
        let place = [file, line.map(String.init)].compactMap { $0 }.joined(separator: ":")
        let prefix = place.isEmpty ? "" : place + ": "
        return key.isEmpty ? prefix + message : prefix + "\(key): " + message
    }
}
