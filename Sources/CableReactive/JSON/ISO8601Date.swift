#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// ISO 8601 dates as Rails writes and reads them, without `ISO8601DateFormatter` (not in FoundationEssentials)
/// or `Date.ISO8601FormatStyle` (its fractional seconds need iOS 15 / macOS 12). Proleptic Gregorian calendar,
/// years 0000 to 9999, no leap-second table.
///
/// Writing is strict: UTC, `Z`, and either no fraction or exactly three digits (Rails' `Time#as_json`), the
/// fraction truncated as Ruby's `Time#xmlschema(3)` truncates it (a date within a microsecond of a whole
/// millisecond, `Double` noise, counts as that millisecond):
///
///     ISO8601Date.string(from: Date(timeIntervalSince1970: 1_796_172_737.1239), fractionDigits: 3)
///     // 2026-12-02T00:52:17.123Z
///
/// Reading is liberal, so that whatever a server sends for a date decodes:
/// - `YYYY-MM-DD` alone (Rails' `Date#as_json`): midnight UTC of that day;
/// - then `T`, `t` or a space, and `hh:mm`, `hh:mm:ss`, or `hh:mm:ss` with a fraction of any length after `.`
///   or `,` (digits beyond the ninth are read but do not change the result);
/// - then `Z`, `z`, `+hh:mm`, `+hhmm`, `+hh` (or `-`), or nothing, which is read as UTC.
///
/// Fields are range-checked (a month 1–12, the day within its month, leap years included; hours 0–23, minutes
/// 0–59, seconds 0–60, a leap second reading as the next minute's first); anything else, including trailing
/// text, is rejected.
package enum ISO8601Date {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    static let secondsFrom1970To2001: Int64 = 978_307_200
    /// Days from 1970-01-01 to 0000-01-01 (negative) and to 10000-01-01: the range we write.
    static let firstDay: Int64 = -719_528
    static let endDay: Int64 = 2_932_897

    /// `date` in UTC as `2026-12-02T00:52:17Z` (`fractionDigits` 0) or `2026-12-02T00:52:17.123Z` (3, the
    /// sub-millisecond rest truncated toward the past); `nil` outside the years 0000–9999 (and for a
    /// non-finite date). `fractionDigits` other than 0 and 3 are taken as 3.
    package static func string(from date: Date, fractionDigits: Int) -> String? {
        // Milliseconds, truncated; but a Double holds noise (.123 read or built from 1970 may be .12299999), so
        // a value within a microsecond, or a few ulps of its time since 1970 or 2001, of a whole millisecond is
        // that millisecond: .123 must not become .122.
        let reference = date.timeIntervalSinceReferenceDate
        let limit = 4e11  // seconds: beyond either end of the years we write, well inside Int64 milliseconds
        guard reference.isFinite, reference.magnitude < limit else { return nil }
        let noise = max(1e-6, 4 * max(reference.magnitude, date.timeIntervalSince1970.magnitude).ulp)
        let scaled = reference * 1000
        let nearest = scaled.rounded()
        let whole = (nearest - scaled).magnitude <= noise * 1000 ? nearest : scaled.rounded(.down)
        let millis = Int64(whole) + secondsFrom1970To2001 * 1000
        let day = floorDivide(millis, 86_400_000)
        guard day >= firstDay, day < endDay else { return nil }
        let ofDay = millis - day * 86_400_000
        let (year, month, dayOfMonth) = civil(fromDays: day)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(year, digits: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(dayOfMonth, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        append(ofDay / 3_600_000, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(ofDay / 60_000 % 60, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(ofDay / 1000 % 60, digits: 2, to: &bytes)
        if fractionDigits != 0 {
            bytes.append(UInt8(ascii: "."))
            append(ofDay % 1000, digits: 3, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The date `text` names, read by the rules in the type's documentation; `nil` when it is not one.
    package static func date(from text: String) -> Date? {
        var reader = Reader(bytes: Array(text.utf8))
        return reader.readDate()
    }

    /// The day (since 1970-01-01) of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day since 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func append(_ value: Int64, digits: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<digits { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Reads one date from the start to the end of `bytes`.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func readDate() -> Date? {
            guard let year = number(digits: 4), skip("-"), let month = number(digits: 2), skip("-"),
                let day = number(digits: 2), (1...12).contains(month), (1...daysInMonth(month, of: year)).contains(day)
            else { return nil }
            var seconds = ISO8601Date.days(year: year, month: month, day: day) * 86_400
            var fraction = 0.0
            if index < bytes.count {
                guard skip("T") || skip("t") || skip(" "), let time = readTime() else { return nil }
                seconds += time.seconds
                fraction = time.fraction
                guard let offset = readOffset() else { return nil }
                seconds -= offset
            }
            guard index == bytes.count else { return nil }
            // Integer seconds from 2001 first, then the fraction: one rounding, so .123 reads back as .123.
            return Date(timeIntervalSinceReferenceDate: Double(seconds - secondsFrom1970To2001) + fraction)
        }

        /// `hh:mm`, `hh:mm:ss` or `hh:mm:ss.fff…`: seconds into the day and the fraction of a second.
        private mutating func readTime() -> (seconds: Int64, fraction: Double)? {
            guard let hour = number(digits: 2), hour < 24, skip(":"), let minute = number(digits: 2), minute < 60
            else { return nil }
            var second: Int64 = 0
            var fraction = 0.0
            if skip(":") {
                guard let value = number(digits: 2), value <= 60 else { return nil }
                second = value
                if skip(".") || skip(",") {
                    guard let value = readFraction() else { return nil }
                    fraction = value
                }
            }
            return (hour * 3600 + minute * 60 + second, fraction)
        }

        /// One or more digits after the decimal sign, as a fraction of a second.
        private mutating func readFraction() -> Double? {
            var numerator: Int64 = 0
            var denominator: Int64 = 1
            let start = index
            while index < bytes.count, let digit = Self.digit(bytes[index]) {
                if denominator < 1_000_000_000 {
                    numerator = numerator * 10 + digit
                    denominator *= 10
                }
                index += 1
            }
            guard index > start else { return nil }
            return Double(numerator) / Double(denominator)
        }

        /// `Z`, `±hh:mm`, `±hhmm`, `±hh`, or nothing (UTC): seconds east of UTC.
        private mutating func readOffset() -> Int64? {
            if skip("Z") || skip("z") || index == bytes.count { return 0 }
            let sign: Int64
            if skip("+") {
                sign = 1
            } else if skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = number(digits: 2), hours < 24 else { return nil }
            var minutes: Int64 = 0
            if index < bytes.count {
                _ = skip(":")
                guard let value = number(digits: 2), value < 60 else { return nil }
                minutes = value
            }
            return sign * (hours * 3600 + minutes * 60)
        }

        private mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// Exactly `digits` ASCII digits.
        private mutating func number(digits: Int) -> Int64? {
            guard bytes.count - index >= digits else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                guard let digit = Self.digit(bytes[index]) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }

        private static func digit(_ byte: UInt8) -> Int64? {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int64(byte - UInt8(ascii: "0")) : nil
        }
    }
}
