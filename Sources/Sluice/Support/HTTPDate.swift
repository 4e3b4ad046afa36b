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

    /// `YYYY-MM-DD` (UTC) for seconds since the epoch.
    static func isoDay(_ seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
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
    /// (IMF-fixdate, RFC 850, asctime); `nil` when it is none of them. Byte by byte, no allocation.
    static func parse(_ text: String) -> Int64? {
        var copy = text
        return copy.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Int64? {
        var day: Int64?
        var month: Int64?
        var year: Int64?
        var clock: (Int64, Int64, Int64)?
        var i = 0
        let n = b.count
        func isSeparator(_ c: UInt8) -> Bool { c == 0x20 || c == 0x2C || c == 0x2D || c == 0x09 }
        while i < n {
            while i < n, isSeparator(b[i]) { i += 1 }
            let start = i
            while i < n, !isSeparator(b[i]) { i += 1 }
            let word = UnsafeBufferPointer(rebasing: b[start..<i])
            guard !word.isEmpty else { continue }
            if word.contains(0x3A) {
                var parts: [Int64] = []
                parts.reserveCapacity(3)
                var value: Int64 = -1
                for c in word {
                    if c == 0x3A {
                        guard value >= 0 else { return nil }
                        parts.append(value)
                        value = -1
                    } else if c >= 0x30, c <= 0x39, value < 100 {
                        value = max(value, 0) * 10 + Int64(c - 0x30)
                    } else {
                        return nil
                    }
                }
                guard value >= 0, parts.count == 2 else { return nil }
                clock = (parts[0], parts[1], value)
            } else if word.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                guard word.count <= 4 else { return nil }
                let number = word.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
                if word.count <= 2, day == nil {
                    day = number
                } else {
                    year = word.count == 2 ? fullYear(twoDigits: number) : number
                }
            } else if word.count == 3, month == nil {
                let key = (UInt32(word[0] | 0x20) << 16) | (UInt32(word[1] | 0x20) << 8) | UInt32(word[2] | 0x20)
                if let index = monthKeys.firstIndex(of: key) { month = Int64(index) }
            }
        }
        guard let day, let month, let year, let clock, (1...31).contains(day), clock.0 < 24, clock.1 < 60,
            clock.2 <= 60
        else { return nil }
        return daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + clock.0 * 3600 + clock.1 * 60
            + clock.2
    }

    private static let monthKeys: [UInt32] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .map { name in name.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }

    /// The year a two-digit year of an RFC 850 date names (RFC 9110 §5.6.7): the one with those
    /// digits within 50 years of `now` (seconds since the epoch), never more than 50 ahead
    /// (`70` is 2070 in 2026, `99` is 1999; `10` is 2110 in 2080).
    static func fullYear(twoDigits: Int64, now: Int64 = Int64(time(nil))) -> Int64 {
        var value = time_t(now)
        var parts = tm()
        gmtime_r(&value, &parts)
        let current = Int64(parts.tm_year) + 1900
        let candidate = current - current % 100 + twoDigits
        if candidate > current + 50 { return candidate - 100 }
        return candidate <= current - 50 ? candidate + 100 : candidate
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
