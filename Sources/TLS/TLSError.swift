import CTLS

/// A failed OpenSSL call: what was attempted and OpenSSL's own words (the error queue, drained).
public struct TLSError: Error, CustomStringConvertible, Sendable {
    /// What was being done.
    public let operation: String
    /// OpenSSL's error queue, oldest first.
    public let details: [String]

    init(_ operation: String) {
        self.operation = operation
        details = TLSError.drainQueue()
    }

    public var description: String {
        details.isEmpty ? operation : operation + ": " + details.joined(separator: "; ")
    }

    /// Empties OpenSSL's thread-local error queue into readable lines.
    static func drainQueue() -> [String] { drainCodes().map(\.line) }

    /// Empties OpenSSL's thread-local error queue: each error's code and its line, oldest first.
    static func drainCodes() -> [(code: UInt, line: String)] {
        var errors: [(UInt, String)] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            errors.append(
                (code, String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return errors
    }
}
