/// The text formats of order values: RFC 3339 date-times, ISO 8601
/// durations, ISO 4217 currencies with decimal amounts, ISO 3166 country codes.
enum OrderValueFormats {
    /// RFC 3339 §5.6 `date-time`: `YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm)`.
    /// Unlike a pass's W3C dates, seconds are required.
    static func isRFC3339DateTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= bytes.count && bytes[range].allSatisfy { (48...57).contains($0) }
        }
        guard bytes.count >= 20, digits(0..<4), bytes[4] == UInt8(ascii: "-"), digits(5..<7),
            bytes[7] == UInt8(ascii: "-"), digits(8..<10),
            bytes[10] == UInt8(ascii: "T"), digits(11..<13), bytes[13] == UInt8(ascii: ":"), digits(14..<16),
            bytes[16] == UInt8(ascii: ":"), digits(17..<19)
        else { return false }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
            guard index > start else { return false }
        }
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "Z") {
            index += 1
        } else {
            guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
                digits((index + 1)..<(index + 3)),
                index + 3 < bytes.count, bytes[index + 3] == UInt8(ascii: ":"), digits((index + 4)..<(index + 6))
            else { return false }
            index += 6
        }
        guard index == bytes.count else { return false }
        // The ranges (month 1–12, day of that month, 24 hours, leap seconds aside) as a pass's dates check them.
        return (try? W3CDate(parsing: text)) != nil
    }

    /// `2026-11-25T09:30:00Z` for a moment in seconds since 1970 (UTC, whole seconds, rounded down), for
    /// messages. PassModel does no I/O and has no Foundation: the civil date is H. Hinnant's algorithm.
    static func rfc3339(secondsSince1970 seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secondOfDay = whole - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return
            "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    /// ISO 8601-1 duration: `P[nY][nM][nW][nD][T[nH][nM][n[.n]S]]`, at least one component.
    static func isISO8601Duration(_ text: String) -> Bool {
        var characters = Substring(text)
        guard characters.popFirst() == "P", !characters.isEmpty else { return false }
        var inTime = false
        var sawComponent = false
        var number = ""
        let dateUnits: [Character] = ["Y", "M", "W", "D"]
        let timeUnits: [Character] = ["H", "M", "S"]
        var lastUnit = -1
        while let character = characters.popFirst() {
            if character.isASCII, character.isNumber || (character == "." && !number.isEmpty) {
                number.append(character)
            } else if character == "T", !inTime, number.isEmpty {
                inTime = true
                lastUnit = -1
            } else {
                let units = inTime ? timeUnits : dateUnits
                guard let unit = units.firstIndex(of: character), unit > lastUnit, !number.isEmpty,
                    !number.hasSuffix("."),
                    !number.contains(".") || character == "S"
                else { return false }
                lastUnit = unit
                number = ""
                sawComponent = true
            }
        }
        return sawComponent && number.isEmpty && !(inTime && lastUnit == -1)
    }

    /// A decimal number as a string: `-?digits[.digits]`, e.g. "42.50".
    static func isDecimalAmount(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" { rest = rest.dropFirst() }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }
    }

    /// Fraction digits of `amount` ("42.50" has 2).
    static func fractionDigits(_ amount: String) -> Int {
        amount.split(separator: ".").dropFirst().first?.count ?? 0
    }

    /// ISO 3166-1 alpha-2: two upper-case letters.
    static func isCountryCode(_ text: String) -> Bool {
        text.utf8.count == 2 && text.utf8.allSatisfy { (65...90).contains($0) }
    }

    /// ISO 4217 codes in use (the standard's list one, 2024), funds and precious metals included.
    static let currencyCodes: [String] = """
        AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF \
        CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD \
        HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA \
        MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB \
        RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN \
        UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW \
        ZWG ZWL
        """.split(separator: " ").map(String.init)
    static let currencySet = Set(currencyCodes)

    /// The minor units of a currency (ISO 4217's "E" column) where they are not 2.
    static func minorUnits(of currency: String) -> Int {
        switch currency {
        case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
            "XOF", "XPF":
            0
        case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND": 3
        case "CLF", "UYW": 4
        default: 2
        }
    }
}
