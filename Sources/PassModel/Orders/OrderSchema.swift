/// Apple's order format as data: every object of "Wallet Orders" › Order
/// (the order and its supporting objects), the keys each holds, which are
/// required, and what each value must be. `OrderValidator` walks an
/// order.json with it, so a rule lives in one row here, not in code per key.
///
/// Sources: Apple's Wallet Orders reference (Order, Merchant, Customer,
/// Address, Application, Barcode, CurrencyAmount, LineItem, Location,
/// OrderProvider, Payment, Payment.SummaryItems, PaymentTransaction,
/// PaymentMethod, ShippingFulfillment, ShippingFulfillment.Recipient,
/// PickupFulfillment, ReturnInfo, Return), and "Creating the source for an order".
struct OrderObjectSchema: Sendable {
    var name: String
    var keys: [OrderKeySchema]

    var knownKeys: [String] { keys.map(\.name) }
}

struct OrderKeySchema: Sendable {
    var name: String
    var value: OrderValueSchema
    var isRequired: Bool

    static func required(_ name: String, _ value: OrderValueSchema) -> OrderKeySchema {
        OrderKeySchema(name: name, value: value, isRequired: true)
    }

    static func optional(_ name: String, _ value: OrderValueSchema) -> OrderKeySchema {
        OrderKeySchema(name: name, value: value, isRequired: false)
    }
}

indirect enum OrderValueSchema: Sendable {
    /// Any string (localizable ones too: Wallet looks them up in order.strings).
    case text
    /// A string of at least this many characters.
    case textOfLength(minimum: Int)
    case number(ClosedRange<Double>?)
    case boolean
    /// A URL: checked by the one URL rule, as `OrderURLKey.all` says for its key path.
    case url
    /// An RFC 3339 date-time, e.g. 2026-11-25T09:30:00Z.
    case dateTime
    /// An ISO 8601 duration, e.g. PT2H.
    case duration
    /// One of these strings.
    case choice([String])
    /// An ISO 3166-1 alpha-2 country code.
    case countryCode
    /// An ISO 4217 currency code.
    case currencyCode
    /// A decimal number written as a string, e.g. "42.50".
    case decimalAmount
    /// The name of an image in the package (PNG or JPEG).
    case image
    /// The name of a file in the package (a receipt, a return label).
    case file
    case object(OrderObjectSchema)
    case array(OrderValueSchema)
    /// A shipping or pickup fulfillment, by its `fulfillmentType`.
    case fulfillment
}

enum OrderSchema {
    static let address = OrderObjectSchema(
        name: "Address",
        keys: [
            .optional("addressLines", .array(.text)), .optional("administrativeArea", .text),
            .optional("countryCode", .countryCode),
            .optional("locality", .text), .optional("postalCode", .text), .optional("subAdministrativeArea", .text),
            .optional("subLocality", .text),
        ])
    static let merchant = OrderObjectSchema(
        name: "Merchant",
        keys: [
            .required("displayName", .text), .required("merchantIdentifier", .text), .required("url", .url),
            .optional("address", .object(address)), .optional("businessChatURL", .url),
            .optional("contactURL", .url), .optional("emailAddress", .text), .optional("logo", .image),
            .optional("phoneNumber", .text),
        ])
    /// Apple's Customer page lists only optional keys.
    static let customer = OrderObjectSchema(
        name: "Customer",
        keys: [
            .optional("emailAddress", .text), .optional("familyName", .text), .optional("givenName", .text),
            .optional("organizationName", .text), .optional("phoneNumber", .text),
        ])
    static let application = OrderObjectSchema(
        name: "Application",
        keys: [
            .required("storeIdentifier", .number(1...Double(Int64.max))),
            .optional("customProductPageIdentifier", .text),
            .optional("launchURL", .url),
        ])
    static let barcode = OrderObjectSchema(
        name: "Barcode",
        keys: [
            .required("format", .choice(["qr", "pdf417", "aztec", "code128"])), .required("message", .text),
            .required("messageEncoding", .text), .optional("altText", .text),
        ])
    static let currencyAmount = OrderObjectSchema(
        name: "CurrencyAmount",
        keys: [
            .required("amount", .decimalAmount), .required("currency", .currencyCode),
        ])
    static let lineItem = OrderObjectSchema(
        name: "LineItem",
        keys: [
            .required("title", .text), .required("quantity", .number(0...1e9)), .optional("subtitle", .text),
            .optional("image", .image),
            .optional("price", .object(currencyAmount)), .optional("gtin", .text), .optional("sku", .text),
        ])
    static let location = OrderObjectSchema(
        name: "Location",
        keys: [
            .required("latitude", .number(-90...90)), .required("longitude", .number(-180...180)),
            .optional("altitude", .number(nil)),
        ])
    static let orderProvider = OrderObjectSchema(
        name: "OrderProvider",
        keys: [
            .required("displayName", .text), .required("url", .url),
            .required("trackingLogoNameLightColorScheme", .image), .required("trackingLogoNameDarkColorScheme", .image),
        ])
    static let summaryItem = OrderObjectSchema(
        name: "Payment.SummaryItems",
        keys: [
            .required("label", .text), .required("value", .object(currencyAmount)),
        ])
    static let paymentMethod = OrderObjectSchema(name: "PaymentMethod", keys: [.required("displayName", .text)])
    static let paymentTransaction = OrderObjectSchema(
        name: "PaymentTransaction",
        keys: [
            .required("amount", .object(currencyAmount)), .required("createdAt", .dateTime),
            .required("paymentMethod", .object(paymentMethod)),
            .required("status", .choice(["pending", "approved", "completed", "cancelled", "failed"])),
            .required("transactionType", .choice(["purchase", "refund"])),
            .optional("applePayTransactionIdentifier", .text),
            .optional("receipt", .file),
        ])
    static let payment = OrderObjectSchema(
        name: "Payment",
        keys: [
            .required("total", .object(currencyAmount)),
            .required("status", .choice(["pending", "authorized", "paid", "refunded", "declined", "voided"])),
            .optional("summaryItems", .array(.object(summaryItem))),
            .optional("transactions", .array(.object(paymentTransaction))),
            .optional("paymentMethods", .array(.text)), .optional("applePayTransactionIdentifiers", .array(.text)),
        ])
    static let recipient = OrderObjectSchema(
        name: "ShippingFulfillment.Recipient",
        keys: [
            .optional("address", .object(address)), .optional("familyName", .text), .optional("givenName", .text),
            .optional("organizationName", .text),
        ])
    static let shippingStatuses = [
        "open", "processing", "onTheWay", "outForDelivery", "delivered", "shipped", "issue", "cancelled",
    ]
    static let shippingFulfillment = OrderObjectSchema(
        name: "ShippingFulfillment",
        keys: [
            .required("fulfillmentIdentifier", .text), .required("fulfillmentType", .choice(["shipping"])),
            .required("status", .choice(shippingStatuses)), .optional("carrier", .text),
            .optional("deliveredAt", .dateTime),
            .optional("estimatedDeliveryAt", .dateTime), .optional("estimatedDeliveryWindowDuration", .duration),
            .optional("lineItems", .array(.object(lineItem))), .optional("notes", .text),
            .optional("recipient", .object(recipient)),
            .optional("shippedAt", .dateTime), .optional("shippingType", .choice(["shipping", "delivery"])),
            .optional("statusDescription", .text), .optional("trackingNumber", .text), .optional("trackingURL", .url),
        ])
    static let pickupStatuses = ["open", "processing", "readyForPickup", "pickedUp", "issue", "cancelled"]
    static let pickupFulfillment = OrderObjectSchema(
        name: "PickupFulfillment",
        keys: [
            .required("displayName", .text), .required("fulfillmentIdentifier", .text),
            .required("fulfillmentType", .choice(["pickup"])),
            .required("status", .choice(pickupStatuses)), .optional("address", .object(address)),
            .optional("barcode", .object(barcode)),
            .optional("lineItems", .array(.object(lineItem))), .optional("location", .object(location)),
            .optional("notes", .text),
            .optional("pickedUpAt", .dateTime), .optional("pickupAt", .dateTime),
            .optional("pickupWindowDuration", .duration),
            .optional("statusDescription", .text),
        ])
    static let returnInfo = OrderObjectSchema(
        name: "ReturnInfo",
        keys: [
            .required("returnPolicyURL", .url), .optional("displayCountdown", .boolean),
            .optional("returnDeadline", .dateTime),
            .optional("returnManagementURL", .url), .optional("returnPolicyDescription", .text),
        ])
    static let orderReturn = OrderObjectSchema(
        name: "Return",
        keys: [
            .required("returnIdentifier", .text),
            .required("status", .choice(["open", "onTheWay", "processing", "issue", "completed", "cancelled"])),
            .optional("carrier", .text), .optional("dropOffBy", .dateTime), .optional("initiatedAt", .dateTime),
            .optional("lineItems", .array(.object(lineItem))), .optional("notes", .text),
            .optional("returnedAt", .dateTime),
            .optional("returnLabel", .file), .optional("returnManagementURL", .url), .optional("returnNumber", .text),
            .optional("statusDescription", .text),
        ])
    static let order = OrderObjectSchema(
        name: "Order",
        keys: [
            .required("schemaVersion", .number(1...1)), .required("orderTypeIdentifier", .text),
            .required("orderIdentifier", .text),
            .required("orderType", .choice(["ecommerce"])), .required("orderManagementURL", .url),
            .required("status", .choice(["open", "completed", "cancelled"])), .required("createdAt", .dateTime),
            .required("updatedAt", .dateTime), .required("merchant", .object(merchant)),
            .optional("authenticationToken", .textOfLength(minimum: 16)), .optional("webServiceURL", .url),
            .optional("associatedApplications", .array(.object(application))),
            .optional("associatedApplicationIdentifiers", .array(.text)),
            .optional("barcode", .object(barcode)),
            .optional("changeNotifications", .choice(["enabled", "disabledIfAppInstalled"])),
            .optional("customer", .object(customer)), .optional("fulfillments", .array(.fulfillment)),
            .optional("lineItems", .array(.object(lineItem))), .optional("orderNumber", .text),
            .optional("orderProvider", .object(orderProvider)),
            .optional("payment", .object(payment)), .optional("returnInfo", .object(returnInfo)),
            .optional("returns", .array(.object(orderReturn))),
            .optional("statusDescription", .text),
        ])
}
