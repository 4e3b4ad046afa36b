#if canImport(Glibc)
    import Glibc
#endif

/// IMF-fixdate (RFC 9110 §5.6.7) for the current second, formatted once per second.
final class HTTPDate {
    private var second: time_t = 0
    private var text = ""

    /// The current time as `Sun, 06 Nov 1994 08:49:37 GMT`.
    var now: String {
        let current = time(nil)
        if current != second {
            second = current
            text = HTTPDate.format(current)
        }
        return text
    }

    static func format(_ seconds: time_t) -> String {
        var value = seconds
        var parts = tm()
        gmtime_r(&value, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
