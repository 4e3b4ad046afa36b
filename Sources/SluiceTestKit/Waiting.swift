import Foundation

/// Waits on a condition instead of a clock: `condition` is asked every `interval` seconds until it
/// holds or `timeout` passes; whether it held. (The one place the tests poll.)
public func eventually(timeout: Double = 5, every interval: Double = 0.01, _ condition: () throws -> Bool) rethrows
    -> Bool
{
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: interval)
    }
}

/// Waits until `value` stops changing (the same for `quiet` seconds: a transfer that paused for a
/// reader that does not read, a count that stopped growing); the value then, or `nil` when it was
/// still changing after `timeout`.
public func settled<T: Equatable>(timeout: Double = 10, quiet: Double = 0.2, _ value: () throws -> T) rethrows -> T? {
    let deadline = Date().addingTimeInterval(timeout)
    var last = try value()
    var since = Date()
    while Date() < deadline {
        Thread.sleep(forTimeInterval: min(0.02, quiet / 4))
        let now = try value()
        if now != last {
            last = now
            since = Date()
        } else if Date().timeIntervalSince(since) >= quiet {
            return now
        }
    }
    return nil
}
