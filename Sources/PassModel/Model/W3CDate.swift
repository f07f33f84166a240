/// A W3C date-time (the ISO 8601 profile Wallet reads), such as
/// `2026-12-01T09:30:00+01:00`: a full date, at least hours and minutes, and
/// a time zone (`Z` or an offset).
///
/// In Apple's pass format, `relevantDate`, `expirationDate`, `relevantDates`
/// and date field values must be dates "with at least hours and minutes". The W3C profile also requires a
/// time zone designator once a time is given; without one the moment would depend on the device's zone.
package struct W3CDate: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The text as written; encoding writes it back unchanged.
    package let text: String
    package let year: Int
    package let month: Int
    package let day: Int
    package let hour: Int
    package let minute: Int
    /// Seconds including any fraction; 0 when the text gives none.
    package let second: Double
    /// The offset from UTC in seconds (`Z` is 0, `-08:00` is -28800).
    package let utcOffset: Int

    /// Why a text is not a W3C date-time.
    package enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not of the form `YYYY-MM-DDThh:mm[:ss[.s]]TZD`.
        case malformed
        /// A date only; Wallet needs at least hours and minutes.
        case missingTime
        /// No `Z` or `±hh:mm` at the end.
        case missingTimeZone
        /// A component is out of range, e.g. month 13 or 25 o'clock.
        case outOfRange(String)

        package var description: String {
            switch self {
            case .malformed: return "is not a W3C date-time of the form YYYY-MM-DDThh:mm[:ss]TZD"
            case .missingTime: return "has a date but no time, and Wallet needs at least hours and minutes"
            case .missingTimeZone: return "has no time zone; end it with Z (UTC) or an offset such as +01:00"
            case .outOfRange(let what): return "has \(what)"
            }
        }
    }

    package init(parsing text: String) throws(ParseError) {
        let chars = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard chars.count - i >= count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = chars[i + k]
                guard (0x30...0x39).contains(c) else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += count
            return value
        }
        func accept(_ ascii: Character) -> Bool {
            guard i < chars.count, chars[i] == ascii.asciiValue! else { return false }
            i += 1
            return true
        }

        guard let year = digits(4), accept("-"), let month = digits(2), accept("-"), let day = digits(2) else {
            throw .malformed
        }
        if i == chars.count { throw .missingTime }
        guard accept("T") else { throw .malformed }
        guard let hour = digits(2), accept(":"), let minute = digits(2) else { throw .malformed }
        var second = 0.0
        if accept(":") {
            guard let whole = digits(2) else { throw .malformed }
            second = Double(whole)
            if accept(".") {
                let start = i
                while i < chars.count, (0x30...0x39).contains(chars[i]) { i += 1 }
                guard i > start, let fraction = Double("0." + String(decoding: chars[start..<i], as: UTF8.self)) else {
                    throw .malformed
                }
                second += fraction
            }
        }
        var offset = 0
        if i == chars.count { throw .missingTimeZone }
        if accept("Z") {
            offset = 0
        } else if i < chars.count, chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-") {
            let sign = chars[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let offsetHours = digits(2) else { throw .malformed }
            var offsetMinutes = 0
            if accept(":") {
                guard let m = digits(2) else { throw .malformed }
                offsetMinutes = m
            } else if let m = digits(2) {
                offsetMinutes = m
            }
            guard offsetHours <= 23, offsetMinutes <= 59 else { throw .outOfRange("a time-zone offset beyond ±23:59") }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            throw .malformed
        }
        guard i == chars.count else { throw .malformed }

        guard (1...12).contains(month) else { throw .outOfRange("month \(month); months are 01–12") }
        let daysInMonth = W3CDate.daysInMonth(month, year: year)
        guard (1...daysInMonth).contains(day) else {
            throw .outOfRange("day \(day), but that month has \(daysInMonth) days")
        }
        guard (0...23).contains(hour) else { throw .outOfRange("hour \(hour); hours are 00–23") }
        guard (0...59).contains(minute) else { throw .outOfRange("minute \(minute); minutes are 00–59") }
        guard second < 61 else { throw .outOfRange("second \(Int(second)); seconds are 00–60") }

        self.text = text
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.utcOffset = offset
    }

    /// Seconds since 1970-01-01T00:00:00Z, for comparing dates and measuring intervals.
    package var secondsSince1970: Double {
        // Days from civil (H. Hinnant's algorithm), valid for the proleptic Gregorian calendar.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + hour * 3600 + minute * 60 - utcOffset) + second
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    package var description: String { text }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" \(error)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
