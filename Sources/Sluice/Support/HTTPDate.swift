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

    /// Seconds since the epoch for an HTTP-date in any of the three formats of RFC 9110 §5.6.7
    /// (IMF-fixdate, RFC 850, asctime); `nil` when it is none of them.
    static func parse(_ text: String) -> Int64? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map { String($0) }
        var day: Int32?
        var month: Int32?
        var year: Int32?
        var clock: [Int32]?
        for word in words {
            if word.contains(":") {
                let parts = word.split(separator: ":").compactMap { Int32($0) }
                guard parts.count == 3 else { return nil }
                clock = parts
            } else if let index = months.firstIndex(of: word.lowercased()) {
                month = Int32(index)
            } else if let number = Int32(word) {
                if word.count <= 2, day == nil {
                    day = number
                } else {
                    year = word.count == 2 ? (number < 70 ? 2000 + number : 1900 + number) : number
                }
            }
        }
        guard let day, let month, let year, let clock, (1...31).contains(day), clock[0] < 24, clock[1] < 60,
            clock[2] <= 60
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month
        parts.tm_mday = day
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        return Int64(timegm(&parts))
    }
}
