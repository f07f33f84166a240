/// An entry of `barcodes` (or the legacy single `barcode`).
package struct Barcode: Sendable, Hashable, Codable {
    package var format: BarcodeFormat
    package var message: String
    /// The IANA character set of `message` when it is turned into bytes, usually `iso-8859-1`.
    package var messageEncoding: String
    /// Text shown near the barcode, e.g. the code in readable form.
    package var altText: String?

    package init(format: BarcodeFormat, message: String, messageEncoding: String = "iso-8859-1", altText: String? = nil)
    {
        self.format = format
        self.message = message
        self.messageEncoding = messageEncoding
        self.altText = altText
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, message, messageEncoding, altText
    }
}
