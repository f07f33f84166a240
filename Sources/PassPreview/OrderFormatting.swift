import Foundation
package import PassModel

/// Order values as people read them: RFC 3339 dates in the device's zone,
/// windows given by an ISO 8601 duration, currency amounts in their own
/// currency (Wallet never converts them: Apple, "Creating the source for an
/// order"), and the words Wallet uses for each status.
extension FieldFormatter {
    /// A date and time ("Nov 20, 2026 at 2:05 PM"), in the device's zone; nil when `text` is not a date.
    package func dateTime(_ text: String) -> String? {
        guard let date = try? W3CDate(parsing: text) else { return nil }
        return dateFormatter(date: .medium, time: .short, zone: deviceTimeZone).string(from: Self.instant(date))
    }

    /// The day of `text` ("Nov 27, 2026"), in the zone it is written in: an estimated delivery without a
    /// window is a day (Apple, ShippingFulfillment.estimatedDeliveryAt: the time is ignored unless
    /// estimatedDeliveryWindowDuration is set), so a device west of it must not show the day before.
    package func day(_ text: String) -> String? {
        guard let date = try? W3CDate(parsing: text) else { return nil }
        let zone = TimeZone(secondsFromGMT: date.utcOffset) ?? deviceTimeZone
        return dateFormatter(date: .medium, time: .none, zone: zone).string(from: Self.instant(date))
    }

    /// `start` to `start + duration` ("Nov 26, 2026, 10:00 AM – 2:00 PM"); the end's day is written only
    /// when it is another day. Without a readable duration, the start alone.
    package func window(from start: String, duration: String?) -> String? {
        guard let date = try? W3CDate(parsing: start) else { return nil }
        let from = Self.instant(date)
        let startText = dateFormatter(date: .medium, time: .short, zone: deviceTimeZone).string(from: from)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = deviceTimeZone
        guard let duration, let components = Self.components(ofDuration: duration),
            let to = calendar.date(byAdding: components, to: from),
            to > from
        else { return startText }
        let sameDay = calendar.isDate(from, inSameDayAs: to)
        let endText = dateFormatter(date: sameDay ? .none : .medium, time: .short, zone: deviceTimeZone).string(
            from: to)
        return "\(startText) – \(endText)"
    }

    /// A CurrencyAmount (`{"amount": "189.00", "currency": "EUR"}`) as the language writes money ("€189.00").
    /// The amount's own digits are kept when it has more than the currency usually shows.
    package func money(_ value: JSONValue?) -> String? {
        guard let value, let amount = value["amount"]?.stringValue else { return nil }
        let currency = value["currency"]?.stringValue ?? ""
        guard let decimal = Decimal(string: amount, locale: Locale(identifier: "en_US_POSIX")), !currency.isEmpty else {
            return "\(amount) \(currency)".trimmingCharacters(in: .whitespaces)
        }
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .currency
        formatter.currencyCode = currency
        let digits = amount.split(separator: ".").dropFirst().first?.count ?? 0
        if digits > formatter.maximumFractionDigits { formatter.maximumFractionDigits = digits }
        return formatter.string(from: NSDecimalNumber(decimal: decimal)) ?? "\(amount) \(currency)"
    }

    /// A quantity: whole numbers without a fraction.
    package func quantity(_ value: JSONValue?) -> String? {
        guard let number = value?.numberValue else { return nil }
        return number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    func dateFormatter(date: DateFormatter.Style, time: DateFormatter.Style, zone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.dateStyle = date
        formatter.timeStyle = time
        formatter.timeZone = zone
        return formatter
    }

    static func instant(_ date: W3CDate) -> Date { Date(timeIntervalSince1970: date.secondsSince1970) }

    /// An ISO 8601-1 duration (`PT4H`, `P1DT12H`, `P2W`) as calendar components; nil when it is not one.
    /// Fractional seconds are rounded (a window is shown to the minute).
    static func components(ofDuration text: String) -> DateComponents? {
        var rest = Substring(text)
        guard rest.popFirst() == "P", !rest.isEmpty else { return nil }
        var components = DateComponents()
        var inTime = false
        var number = ""
        var any = false
        while let character = rest.popFirst() {
            if character.isASCII && (character.isNumber || character == ".") {
                number.append(character)
                continue
            }
            if character == "T", !inTime, number.isEmpty {
                inTime = true
                continue
            }
            guard let value = Double(number) else { return nil }
            number = ""
            any = true
            switch (inTime, character) {
            case (false, "Y"): components.year = (components.year ?? 0) + Int(value)
            case (false, "M"): components.month = (components.month ?? 0) + Int(value)
            case (false, "W"): components.day = (components.day ?? 0) + 7 * Int(value)
            case (false, "D"): components.day = (components.day ?? 0) + Int(value)
            case (true, "H"): components.hour = Int(value)
            case (true, "M"): components.minute = Int(value)
            case (true, "S"): components.second = Int(value.rounded())
            default: return nil
            }
        }
        return any && number.isEmpty ? components : nil
    }
}

/// The words Wallet shows for an order's and a fulfillment's status. Apple's
/// Human Interface Guidelines (Wallet › Order tracking) name them: "Order
/// Placed, Processing, Ready for Pickup, Picked Up, Out for Delivery,
/// Delivered, or — if something goes wrong — Issue or Canceled"; the values
/// are those of Apple's Order.status, ShippingFulfillment.status and
/// PickupFulfillment.status. Wallet localizes them itself; the preview
/// shows them in English.
enum OrderStatusWords {
    static let fulfillment: [String: String] = [
        "open": "Order Placed", "processing": "Processing", "onTheWay": "On the Way",
        "outForDelivery": "Out for Delivery",
        "delivered": "Delivered", "shipped": "Shipped", "readyForPickup": "Ready for Pickup", "pickedUp": "Picked Up",
        "issue": "Issue", "cancelled": "Canceled",
    ]

    /// Return.status (Apple, "Return"): open, onTheWay, processing, issue, completed, cancelled.
    static let orderReturn: [String: String] = [
        "open": "Return Started", "onTheWay": "On the Way", "processing": "Processing", "issue": "Issue",
        "completed": "Return Completed", "cancelled": "Canceled",
    ]

    /// A closed order says so; an open one shows its first fulfillment's status (Wallet derives the order's
    /// current status from the fulfillment status: HIG, "keep the status up to date"), else Order Placed.
    static func headline(orderStatus: String?, firstFulfillmentStatus: String?) -> String {
        switch orderStatus {
        case "completed": "Completed"
        case "cancelled": "Canceled"
        default: firstFulfillmentStatus.map { fulfillment[$0] ?? $0 } ?? "Order Placed"
        }
    }
}
