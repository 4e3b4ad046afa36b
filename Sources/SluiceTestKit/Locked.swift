import Foundation

/// A value behind a lock, for the test kit's threads. Like `Synchronization.Mutex`, but on a
/// pthread mutex (`NSLock`), which ThreadSanitizer understands: `Mutex` waits on a raw futex on
/// Linux, so `scripts/sanitize.sh thread` reported its correctly locked accesses as races.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
