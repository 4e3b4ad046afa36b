/// A JSON number compared exactly on its decimal text: `1`, `1.0` and `10e-1` are the same
/// number, `0.1 + 0.2` never enters the picture, and a number with thousands of digits compares as
/// exactly as a small one. Value = (negative ? -1 : 1) × 0.d₁d₂…dₙ × 10^exponent, with no leading or
/// trailing zero digits; zero has no digits.
public struct Number: Hashable, Sendable, CustomStringConvertible {
    public let negative: Bool
    /// Significant digits, 0–9, most significant first; empty for zero.
    public let digits: [UInt8]
    public let exponent: Int
    /// The value when it is an integer that fits 63 bits (the common case, compared without the digits).
    public let small: Int64?
    /// Whether its text had a fraction or an exponent (`80.0`, `1e2`): not a value's part (`80.0`
    /// equals `80`), but how draft-04 tells a number from an integer, so ``jsonText`` keeps it.
    public let writtenWithFraction: Bool

    /// Parses JSON number text (`-12.5e3`); `nil` when it is not one. Exponents beyond ±10⁹ are
    /// rejected as not numbers Sluice can compare.
    public init?<Bytes: Collection>(text: Bytes) where Bytes.Element == UInt8 {
        var index = text.startIndex
        var negative = false
        if index < text.endIndex, text[index] == 0x2D {
            negative = true
            index = text.index(after: index)
        }
        // All digits, integer part then fraction; value = 0.DIGITS × 10^integerDigits.
        var digits: [UInt8] = []
        var integerDigits = 0
        var sawPoint = false
        while index < text.endIndex {
            let byte = text[index]
            if byte >= 0x30 && byte <= 0x39 {
                digits.append(byte - 0x30)
                if !sawPoint { integerDigits += 1 }
            } else if byte == 0x2E, !sawPoint {
                sawPoint = true
            } else {
                break
            }
            index = text.index(after: index)
        }
        guard !digits.isEmpty else { return nil }
        var exponentValue = 0
        if index < text.endIndex, text[index] | 0x20 == 0x65 {
            index = text.index(after: index)
            var exponentNegative = false
            if index < text.endIndex, text[index] == 0x2B || text[index] == 0x2D {
                exponentNegative = text[index] == 0x2D
                index = text.index(after: index)
            }
            var sawExponentDigit = false
            while index < text.endIndex, text[index] >= 0x30 && text[index] <= 0x39 {
                sawExponentDigit = true
                exponentValue = exponentValue * 10 + Int(text[index] - 0x30)
                guard exponentValue < 1_000_000_000 else { return nil }
                index = text.index(after: index)
            }
            guard sawExponentDigit else { return nil }
            if exponentNegative { exponentValue = -exponentValue }
        }
        guard index == text.endIndex else { return nil }
        let leadingZeros = digits.firstIndex(where: { $0 != 0 }) ?? digits.count
        self.init(
            negative: negative, rawDigits: Array(digits[leadingZeros...]),
            pointExponent: integerDigits - leadingZeros + exponentValue,
            writtenWithFraction: sawPoint || text.contains { $0 | 0x20 == 0x65 })
    }

    public static func == (one: Number, other: Number) -> Bool {
        one.negative == other.negative && one.exponent == other.exponent && one.digits == other.digits
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(negative)
        hasher.combine(exponent)
        hasher.combine(digits)
    }

    private init(negative: Bool, rawDigits: [UInt8], pointExponent: Int, writtenWithFraction: Bool = false) {
        self.writtenWithFraction = writtenWithFraction
        var digits = rawDigits
        while digits.last == 0 { digits.removeLast() }
        self.digits = digits
        self.negative = digits.isEmpty ? false : negative
        self.exponent = digits.isEmpty ? 0 : pointExponent
        if digits.isEmpty {
            small = 0
        } else if exponent >= digits.count, exponent <= 18 {
            var value: Int64 = 0
            for digit in digits { value = value * 10 + Int64(digit) }
            for _ in digits.count..<exponent { value *= 10 }
            small = negative ? -value : value
        } else {
            small = nil
        }
    }

    public init(_ value: Int) {
        self.init(text: Array(String(value).utf8))!
    }

    /// Whether the number has no fractional part (`1.0` is an integer, as in JSON Schema 2020-12).
    public var isInteger: Bool { digits.isEmpty || exponent >= digits.count }

    public var isZero: Bool { digits.isEmpty }

    /// The number as JSON text that keeps its form where it is whole: written with a fraction or
    /// an exponent, it keeps one (`80.0`); written without, every digit (`10000000000000000000000`,
    /// not `1e22`). Draft-04 tells integers by that form; otherwise ``description``.
    public var jsonText: String {
        let text = description
        guard isInteger else { return text }
        if writtenWithFraction {
            return text.utf8.contains { $0 == 0x2E || $0 == 0x65 } ? text : text + ".0"
        }
        guard exponent > 21 else { return text }
        let significant = String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
        return (negative ? "-" : "") + significant + String(repeating: "0", count: exponent - digits.count)
    }

    /// The value as JavaScript writes a number, without the `+` of a positive exponent: plain
    /// decimals from 10⁻⁶ to below 10²¹ (`1.5`, `0.000001`, `1000`), else one digit before the point
    /// and an exponent (`1.5e30`, `2e-9`).
    /// Every digit is kept: the text reads back as the same value.
    public var description: String {
        if let small { return String(small) }
        guard !digits.isEmpty else { return "0" }
        var text = negative ? "-" : ""
        let significant = String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
        if exponent <= 0 && exponent > -6 {
            text += "0." + String(repeating: "0", count: -exponent) + significant
        } else if exponent > 0 && exponent < digits.count {
            text += significant.prefix(exponent) + "." + significant.dropFirst(exponent)
        } else if exponent >= digits.count && exponent <= 21 {
            text += significant + String(repeating: "0", count: exponent - digits.count)
        } else {
            text += significant.prefix(1) + (digits.count > 1 ? "." + significant.dropFirst() : "") + "e\(exponent - 1)"
        }
        return text
    }

    /// A `Double` near the value (for messages and sizes, never for comparisons).
    public var approximate: Double { Double(description) ?? .nan }

    /// The value as an `Int` when it is an integer that fits.
    public var integer: Int? { small.map { Int($0) } }

    public static func < (lhs: Number, rhs: Number) -> Bool { compare(lhs, rhs) < 0 }

    /// -1, 0 or 1.
    public static func compare(_ lhs: Number, _ rhs: Number) -> Int {
        if let a = lhs.small, let b = rhs.small { return a < b ? -1 : (a == b ? 0 : 1) }
        if lhs.negative != rhs.negative { return lhs.negative ? -1 : 1 }
        if lhs.isZero || rhs.isZero {
            if lhs.isZero && rhs.isZero { return 0 }
            // Signs are equal and one is zero: zero is not negative, so the other is positive.
            return lhs.isZero ? -1 : 1
        }
        let magnitude = compareMagnitude(lhs, rhs)
        return lhs.negative ? -magnitude : magnitude
    }

    private static func compareMagnitude(_ lhs: Number, _ rhs: Number) -> Int {
        if lhs.exponent != rhs.exponent { return lhs.exponent < rhs.exponent ? -1 : 1 }
        for index in 0..<min(lhs.digits.count, rhs.digits.count) where lhs.digits[index] != rhs.digits[index] {
            return lhs.digits[index] < rhs.digits[index] ? -1 : 1
        }
        return lhs.digits.count == rhs.digits.count ? 0 : (lhs.digits.count < rhs.digits.count ? -1 : 1)
    }

    /// Whether `self` divided by `divisor` is an integer, exactly. `nil` when answering would take
    /// more than `limit` digits of work (a verdict of its own, never a stall).
    public func isMultiple(of divisor: Number, limit: Int = 100_000) -> Bool? {
        guard !divisor.isZero else { return false }
        if isZero { return true }
        if let a = small, let b = divisor.small { return a % b == 0 }
        // self = A × 10^(e1), divisor = B × 10^(e2) with A, B integers of their digits.
        let e1 = exponent - digits.count
        let e2 = divisor.exponent - divisor.digits.count
        // self / divisor = (A / B) × 10^(e1 - e2): an integer iff A × 10^(e1-e2) ≡ 0 (mod B) when
        // e1 ≥ e2; when e1 < e2, iff A ≡ 0 (mod B × 10^(e2-e1)).
        let shift = e1 - e2
        if shift >= 0 {
            if divisor.digits.count <= 18 {
                var modulus: UInt64 = 0
                for digit in divisor.digits { modulus = modulus * 10 + UInt64(digit) }
                var remainder: UInt64 = 0
                for digit in digits { remainder = Self.mulmod(remainder, 10, modulus) &+ UInt64(digit) % modulus }
                remainder %= modulus
                remainder = Self.mulmod(remainder, Self.powmod(10, UInt64(shift), modulus), modulus)
                return remainder == 0
            }
            guard digits.count + shift <= limit else { return nil }
            return Self.remainderIsZero(digits + [UInt8](repeating: 0, count: shift), divisor.digits)
        } else {
            guard divisor.digits.count - shift <= limit else { return nil }
            return Self.remainderIsZero(digits, divisor.digits + [UInt8](repeating: 0, count: -shift))
        }
    }

    private static func mulmod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return m.dividingFullWidth((high % m, low)).remainder
    }

    private static func powmod(_ base: UInt64, _ exponent: UInt64, _ m: UInt64) -> UInt64 {
        var result: UInt64 = 1 % m
        var base = base % m
        var exponent = exponent
        while exponent > 0 {
            if exponent & 1 == 1 { result = mulmod(result, base, m) }
            base = mulmod(base, base, m)
            exponent >>= 1
        }
        return result
    }

    /// Long division of decimal digit strings: whether `dividend mod divisor == 0`.
    private static func remainderIsZero(_ dividend: [UInt8], _ divisor: [UInt8]) -> Bool {
        var remainder: [UInt8] = []
        for digit in dividend {
            remainder.append(digit)
            while remainder.first == 0 { remainder.removeFirst() }
            while !lessThan(remainder, divisor) { remainder = subtract(remainder, divisor) }
        }
        return remainder.isEmpty
    }

    private static func lessThan(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a.count != b.count { return a.count < b.count }
        for index in 0..<a.count where a[index] != b[index] { return a[index] < b[index] }
        return false
    }

    private static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = a
        var borrow = 0
        var i = result.count - 1
        var j = b.count - 1
        while i >= 0 {
            var value = Int(result[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
            borrow = 0
            if value < 0 {
                value += 10
                borrow = 1
            }
            result[i] = UInt8(value)
            i -= 1
            j -= 1
        }
        while result.first == 0 { result.removeFirst() }
        return result
    }
}
