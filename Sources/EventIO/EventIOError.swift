#if canImport(Glibc)
    import Glibc
#endif

/// A libevent or socket call that failed: the operation and `errno` at the time.
public struct EventIOError: Error, CustomStringConvertible, Sendable {
    /// The C call that failed, e.g. `"evconnlistener_new_bind"`.
    public var operation: String
    /// `errno` when the call failed (0 if the call does not set it).
    public var code: Int32

    /// Captures `errno` now.
    public init(operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    public var description: String {
        code == 0 ? "\(operation) failed" : "\(operation) failed: \(String(cString: strerror(code)))"
    }
}
