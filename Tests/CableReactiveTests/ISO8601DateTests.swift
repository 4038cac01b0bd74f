import CableTesting
import Foundation
import Testing

@testable import CableReactive

@Suite("ISO8601Date")
struct ISO8601DateTests {
    /// 2026-12-02T00:52:17Z.
    static let instant: TimeInterval = 1_796_172_737

    @Test(
        "writes UTC with a Z and exactly three fraction digits, or none",
        arguments: [
            (instant + 0.123, 3, "2026-12-02T00:52:17.123Z"),
            (instant, 3, "2026-12-02T00:52:17.000Z"),
            (instant + 0.999, 3, "2026-12-02T00:52:17.999Z"),
            (instant + 0.123, 0, "2026-12-02T00:52:17Z"),
            (instant + 0.999, 0, "2026-12-02T00:52:17Z"),
            (0, 3, "1970-01-01T00:00:00.000Z"),
            (-0.001, 3, "1969-12-31T23:59:59.999Z"),
            (-0.5, 0, "1969-12-31T23:59:59Z"),
            (-86_400 * 365, 3, "1969-01-01T00:00:00.000Z"),
            (-2_208_988_800, 3, "1900-01-01T00:00:00.000Z"),
            (951_782_400, 3, "2000-02-29T00:00:00.000Z"),  // 2000 is a leap year (divisible by 400)
            (1_709_164_800 + 0.25, 3, "2024-02-29T00:00:00.250Z"),
            (4_107_542_400, 3, "2100-03-01T00:00:00.000Z"),  // 2100 is not: February has 28 days
            (-62_167_219_200, 3, "0000-01-01T00:00:00.000Z"),
            (253_402_300_799.999, 3, "9999-12-31T23:59:59.999Z"),
        ] as [(TimeInterval, Int, String)])
    func writes(seconds: TimeInterval, digits: Int, text: String) {
        #expect(ISO8601Date.string(from: Date(timeIntervalSince1970: seconds), fractionDigits: digits) == text)
    }

    @Test("truncates below the millisecond, as Ruby's xmlschema(3) does, without losing a millisecond to noise")
    func truncates() {
        #expect(string(Self.instant + 0.1239) == "2026-12-02T00:52:17.123Z")
        #expect(string(Self.instant + 0.9999) == "2026-12-02T00:52:17.999Z")
        #expect(string(-0.0001) == "1969-12-31T23:59:59.999Z")  // toward the past, before 1970 too
        // Each millisecond of a second in 2026, built from its decimal text, writes back as that text.
        for millis in 0..<1000 {
            let fraction = "\(millis + 1000)".dropFirst()
            let date = Date(timeIntervalSince1970: Self.instant + Double(millis) / 1000)
            #expect(string(date.timeIntervalSince1970) == "2026-12-02T00:52:17.\(fraction)Z")
        }
    }

    @Test("has no form for a date outside the years 0000-9999 or a non-finite one")
    func outOfRange() {
        #expect(string(-62_167_219_200.001) == nil)
        #expect(string(253_402_300_800) == nil)
        #expect(string(.infinity) == nil)
        #expect(string(-.infinity) == nil)
        #expect(string(.nan) == nil)
        #expect(string(1e300) == nil)
        #expect(ISO8601Date.string(from: .distantPast, fractionDigits: 3) == "0000-12-30T00:00:00.000Z")
        #expect(ISO8601Date.string(from: .distantFuture, fractionDigits: 3) == "4001-01-01T00:00:00.000Z")
    }

    @Test(
        "reads what Rails and other servers write",
        arguments: [
            ("2026-12-02T00:52:17.123Z", instant + 0.123),
            ("2026-12-02T00:52:17Z", instant),
            ("2026-12-02T00:52:17.1Z", instant + 0.1),
            ("2026-12-02T00:52:17.123456789Z", instant + 0.123456789),
            ("2026-12-02T00:52:17.1234567891234Z", instant + 0.123456789),
            ("2026-12-02T00:52:17,5Z", instant + 0.5),
            ("2026-12-02t00:52:17z", instant),
            ("2026-12-02 00:52:17Z", instant),
            ("2026-12-02T00:52Z", instant - 17),
            ("2026-12-02T00:52:17", instant),  // no offset: UTC
            ("2026-12-02T01:52:17+01:00", instant),
            ("2026-12-02T01:52:17.123+01:00", instant + 0.123),
            ("2026-12-01T19:22:17-05:30", instant),
            ("2026-12-02T01:52:17+0100", instant),
            ("2026-12-02T01:52:17+01", instant),
            ("2026-12-02T00:52:17+00:00", instant),
            ("2026-12-02T00:52:17-00:00", instant),
            ("2026-12-02", instant - 3137),  // Date#as_json: midnight UTC
            ("2026-12-02T00:52:60Z", instant + 43),  // a leap second: the next minute's first
            ("1970-01-01T00:00:00Z", 0),
            ("1969-12-31T23:59:59.999Z", -0.001),
            ("1900-01-01T00:00:00Z", -2_208_988_800),
            ("2000-02-29T00:00:00Z", 951_782_400),
            ("2024-02-29T12:00:00Z", 1_709_208_000),
            ("0000-01-01T00:00:00Z", -62_167_219_200),
            ("9999-12-31T23:59:59.999Z", 253_402_300_799.999),
        ] as [(String, TimeInterval)])
    func reads(text: String, seconds: TimeInterval) throws {
        let date = try #require(ISO8601Date.date(from: text), "\(text)")
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6, "\(text): \(date.timeIntervalSince1970)")
    }

    @Test(
        "rejects what is not a date",
        arguments: [
            "", "garbage", "2026", "2026-12", "2026-12-2", "26-12-02", "2026/12/02", "+2026-12-02", "2026-12-02T",
            "2026-12-02T00", "2026-12-02T0:52:17Z", "2026-12-02T00:52:17.Z", "x",
            "2026-13-01", "2026-00-01", "2026-12-00", "2026-12-32", "2026-02-29", "2100-02-29", "2026-04-31",
            "2026-12-02T24:00:00Z", "2026-12-02T00:60:00Z", "2026-12-02T00:00:61Z", "2026-12-02T00:00:00+24:00",
            "2026-12-02T00:00:00+01:60", "2026-12-02T00:00:00+1", "2026-12-02T00:00:00+01:", "2026-12-02T00:00:00+01:0",
            "2026-12-02T00:00:00ZZ", "2026-12-02T00:00:00Z ", " 2026-12-02", "2026-12-02T00:00:00 +01:00",
            "2026-12-02T00:00:00UTC", "2026-12-02Z", "2026-12-02T00:00:00.12a3Z", "２０２６-12-02",
            "2026-12-02T00:00:00\u{0}",
        ])
    func rejects(text: String) {
        #expect(ISO8601Date.date(from: text) == nil, "\(text)")
    }

    @Test("round trip: every written text reads back as its millisecond (years 0000-9999); between two, the one below")
    func roundTrip() throws {
        var random = SeededRandom(seed: 8601)
        for _ in 0..<2000 {
            let millis = Int64.random(in: -62_167_219_200_000..<253_402_300_800_000, using: &random)
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let text = try #require(ISO8601Date.string(from: date, fractionDigits: 3))
            let back = try #require(ISO8601Date.date(from: text), "\(text)")
            #expect(ISO8601Date.string(from: back, fractionDigits: 3) == text)
            #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 1e-4, "\(text)")
        }
        // Between whole milliseconds (from 1900 to 2100, built either way): the millisecond below.
        for _ in 0..<2000 {
            let millis = Int64.random(in: -2_208_988_800_000..<4_102_444_800_000, using: &random)
            let rest = Double.random(in: 0.01..<0.99, using: &random)
            let unix = Date(timeIntervalSince1970: (Double(millis) + rest) / 1000)
            let reference = Date(timeIntervalSinceReferenceDate: (Double(millis - 978_307_200_000) + rest) / 1000)
            let expected = try #require(
                ISO8601Date.string(from: Date(timeIntervalSince1970: Double(millis) / 1000), fractionDigits: 3))
            #expect(ISO8601Date.string(from: unix, fractionDigits: 3) == expected)
            #expect(ISO8601Date.string(from: reference, fractionDigits: 3) == expected)
        }
    }

    @Test("the calendar arithmetic agrees with a day-by-day count across leap years and centuries")
    func calendar() {
        var day = ISO8601Date.days(year: 1600, month: 1, day: 1)
        var mismatches: [String] = []
        for year: Int64 in 1600...2400 {
            for month: Int64 in 1...12 {
                for dayOfMonth in 1...ISO8601Date.daysInMonth(month, of: year) {
                    let civil = ISO8601Date.civil(fromDays: day)
                    if ISO8601Date.days(year: year, month: month, day: dayOfMonth) != day
                        || civil != (year, month, dayOfMonth)
                    {
                        mismatches.append("day \(day): \(year)-\(month)-\(dayOfMonth), civil \(civil)")
                    }
                    day += 1
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(day - ISO8601Date.days(year: 1600, month: 1, day: 1) == 801 * 365 + 195)  // 195 leap years
        #expect(ISO8601Date.days(year: 1970, month: 1, day: 1) == 0)
        #expect(ISO8601Date.days(year: 2001, month: 1, day: 1) * 86_400 == ISO8601Date.secondsFrom1970To2001)
    }

    private func string(_ seconds: TimeInterval) -> String? {
        ISO8601Date.string(from: Date(timeIntervalSince1970: seconds), fractionDigits: 3)
    }
}
