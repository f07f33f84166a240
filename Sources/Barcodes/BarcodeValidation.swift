package import PassModel

/// The build's check that every barcode of a pass can really be drawn:
/// the message encoded with the encoder the preview uses (libzint).
package enum BarcodeValidation {
    /// One error per barcode whose message cannot be encoded in its format,
    /// at its `message`. Barcodes without a known format or a text message
    /// are left to PassValidator, which reports those.
    package static func diagnostics(for passJSON: JSONValue) -> [Diagnostic] {
        var entries: [(JSONValue, JSONPath)] = []
        for (index, barcode) in (passJSON["barcodes"]?.arrayValue ?? []).enumerated() {
            entries.append((barcode, [.key("barcodes"), .index(index)]))
        }
        if let legacy = passJSON["barcode"] { entries.append((legacy, [.key("barcode")])) }
        var problems: [Diagnostic] = []
        for (barcode, path) in entries {
            guard let format = barcode["format"]?.stringValue.flatMap(BarcodeFormat.init(rawValue:)),
                let message = barcode["message"]?.stringValue
            else { continue }
            let encoding = barcode["messageEncoding"]?.stringValue ?? "iso-8859-1"
            if let problem = BarcodeEncoder.problem(message, format: format, messageEncoding: encoding) {
                problems.append(
                    .error(
                        at: path.appending("message"), rule: "barcode.encodable",
                        "the \(format.rawValue) barcode cannot encode this message: \(problem.reason)"))
            }
        }
        return problems
    }
}
