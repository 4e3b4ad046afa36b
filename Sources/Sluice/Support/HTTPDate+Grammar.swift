extension HTTPDate {
    /// Seconds since the epoch for a field value that is exactly one HTTP-date of RFC 9110 §5.6.7:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), or one of the obsolete forms a recipient must
    /// accept, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    /// Names are compared without case (what browsers and the cache test suite accept); anything
    /// else — another zone than GMT, a two-digit year in IMF-fixdate, a missing comma, doubled
    /// spaces, dashes, a one-digit hour, a day the month does not have — is `nil`.
    /// `Expires` (RFC 9111 §5.3) and `If-Modified-Since` (RFC 9110 §13.1.3) are read this way.
    static func parseStrict(_ text: String) -> Int64? {
        var copy = text
        return copy.withUTF8 { bytes in
            var scanner = DateScanner(bytes: bytes)
            return scanner.date()
        }
    }

    /// `nil` unless `values` holds exactly one line that is a valid HTTP-date: a singleton field
    /// sent on several lines has no valid value.
    static func parseStrict(single values: [String]) -> Int64? {
        guard values.count == 1 else { return nil }
        return parseStrict(values[0])
    }
}

/// A cursor over the bytes of one HTTP-date.
private struct DateScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    mutating func date() -> Int64? {
        let dayName = letters()
        if Self.shortDays.contains(dayName) {
            if take(0x2C) { return imfFixdate() }
            if take(0x20) { return asctime() }
            return nil
        }
        guard Self.longDays.contains(dayName), take(0x2C) else { return nil }
        return rfc850()
    }

    /// `, 06 Nov 1994 08:49:37 GMT` after the day name.
    private mutating func imfFixdate() -> Int64? {
        guard take(0x20), let day = digits(2), take(0x20), let month = month(), take(0x20), let year = digits(4),
            take(0x20), let time = timeOfDay(), take(0x20), gmt(), atEnd
        else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// `, 06-Nov-94 08:49:37 GMT` after the long day name; the two-digit year is the latest one
    /// not more than 50 years ahead (RFC 9110 §5.6.7, ``HTTPDate/fullYear(twoDigits:now:)``).
    private mutating func rfc850() -> Int64? {
        guard take(0x20), let day = digits(2), take(0x2D), let month = month(), take(0x2D), let short = digits(2),
            take(0x20), let time = timeOfDay(), take(0x20), gmt(), atEnd
        else { return nil }
        return seconds(year: HTTPDate.fullYear(twoDigits: short), month: month, day: day, time: time)
    }

    /// `Nov  6 08:49:37 1994` after the day name and its space.
    private mutating func asctime() -> Int64? {
        guard let month = month(), take(0x20) else { return nil }
        let day: Int64?
        if take(0x20) { day = digits(1) } else { day = digits(2) }
        guard let day, take(0x20), let time = timeOfDay(), take(0x20), let year = digits(4), atEnd else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    private func seconds(year: Int64, month: Int64, day: Int64, time: Int64) -> Int64? {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= lengths[Int(month)] else { return nil }
        return HTTPDate.daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + time
    }

    /// `hh:mm:ss`, two digits each; a leap second (60) is allowed by the grammar.
    private mutating func timeOfDay() -> Int64? {
        guard let hour = digits(2), hour < 24, take(0x3A), let minute = digits(2), minute < 60, take(0x3A),
            let second = digits(2), second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// A month name's index (0 = January).
    private mutating func month() -> Int64? {
        let name = letters()
        guard name.count == 3, let index = Self.months.firstIndex(of: name) else { return nil }
        return Int64(index)
    }

    private mutating func gmt() -> Bool { letters() == "gmt" }

    /// Exactly `count` ASCII digits.
    private mutating func digits(_ count: Int) -> Int64? {
        guard index + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for offset in 0..<count {
            let c = bytes[index + offset]
            guard c >= 0x30, c <= 0x39 else { return nil }
            value = value * 10 + Int64(c - 0x30)
        }
        index += count
        if index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { return nil }
        return value
    }

    /// The run of ASCII letters at the cursor, lower-cased (at most 9: the longest day name).
    private mutating func letters() -> String {
        var text = ""
        while index < bytes.count, text.utf8.count <= 9 {
            let c = bytes[index] | 0x20
            guard c >= 0x61, c <= 0x7A, bytes[index] >= 0x41 else { break }
            text.unicodeScalars.append(Unicode.Scalar(c))
            index += 1
        }
        return text
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private var atEnd: Bool { index == bytes.count }
}
