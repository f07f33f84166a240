/// HTTP dates (RFC 9110 §5.6.7): written as IMF-fixdate, read in all three
/// forms a client may send — IMF-fixdate, the obsolete RFC 850 form, and
/// ANSI C's asctime() form. Apple's protocol asks servers to "support
/// standard HTTP caching … check for the If-Modified-Since header", and a
/// server that parses only one form never answers 304 to the others.
package enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let longWeekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for seconds since 1970.
    package static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        return
            "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(Int(secondOfDay / 3600))):\(two(Int(secondOfDay / 60 % 60))):\(two(Int(secondOfDay % 60))) GMT"
    }

    /// Seconds since 1970, or nil when `text` is none of the three forms
    /// (RFC 9110: a recipient ignores an invalid If-Modified-Since).
    /// `now` decides the century of an RFC 850 two-digit year.
    package static func parse(_ text: some StringProtocol, now: Int64? = nil) -> Int64? {
        let bytes = Array(text.utf8)
        return parseIMFFixdate(bytes) ?? parseRFC850(bytes, now: now) ?? parseAsctime(bytes)
    }

    // `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func parseIMFFixdate(_ b: [UInt8]) -> Int64? {
        guard b.count == 29, weekdays.contains(string(b[0..<3])), b[3] == comma, b[4] == space,
            let day = number(b[5..<7]), b[7] == space, let month = month(b[8..<11]), b[11] == space,
            let year = number(b[12..<16]), b[16] == space, let time = time(b[17..<25]),
            string(b[25..<29]) == " GMT"
        else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    // `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func parseRFC850(_ b: [UInt8], now: Int64?) -> Int64? {
        guard let comma = b.firstIndex(of: comma), longWeekdays.contains(string(b[0..<comma])) else { return nil }
        let rest = Array(b[(comma + 1)...])
        guard rest.count == 23, rest[0] == space, let day = number(rest[1..<3]), rest[3] == dash,
            let month = month(rest[4..<7]),
            rest[7] == dash, let shortYear = number(rest[8..<10]), rest[10] == space, let time = time(rest[11..<19]),
            string(rest[19..<23]) == " GMT"
        else { return nil }
        // RFC 9110: a two-digit year more than 50 years in the future is the
        // most recent past year with the same last two digits.
        let currentYear = civil(fromDays: (now ?? currentSeconds()) / 86_400).year
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return epoch(year: year, month: month, day: day, time: time)
    }

    // `Sun Nov  6 08:49:37 1994`
    private static func parseAsctime(_ b: [UInt8]) -> Int64? {
        guard b.count == 24, weekdays.contains(string(b[0..<3])), b[3] == space, let month = month(b[4..<7]),
            b[7] == space,
            let day = b[8] == space ? number(b[9..<10]) : number(b[8..<10]), b[10] == space,
            let time = time(b[11..<19]),
            b[19] == space, let year = number(b[20..<24])
        else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    // MARK: Pieces

    private static let space = UInt8(ascii: " "), comma = UInt8(ascii: ","), dash = UInt8(ascii: "-"),
        colon = UInt8(ascii: ":")

    private static func string(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func month(_ bytes: ArraySlice<UInt8>) -> Int? {
        months.firstIndex(of: string(bytes)).map { $0 + 1 }
    }

    /// `08:49:37` → seconds of the day.
    private static func time(_ b: ArraySlice<UInt8>) -> Int? {
        let b = Array(b)
        guard b.count == 8, b[2] == colon, b[5] == colon, let h = number(b[0..<2]), let m = number(b[3..<5]),
            let s = number(b[6..<8]),
            h < 24, m < 60, s <= 60
        else { return nil }
        return h * 3600 + m * 60 + min(s, 59)
    }

    private static func epoch(year: Int, month: Int, day: Int, time: Int) -> Int64? {
        guard (1...31).contains(day), day <= daysIn(month: month, year: year) else { return nil }
        return days(fromCivil: year, month, day) * 86_400 + Int64(time)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days_from_civil: days since 1970-01-01.
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The inverse: (year, month 1…12, day 1…31).
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func currentSeconds() -> Int64 {
        #if canImport(Glibc)
            Int64(Glibc.time(nil))
        #else
            Int64(Darwin.time(nil))
        #endif
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
