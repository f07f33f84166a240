/// A `.pkpasstemplate` bundle as Apple's Pass Designer saves it: pass.json
/// from JSONEncoder with `.prettyPrinted` and `.sortedKeys` (escaped slashes,
/// an `_id` in every field, identity keys left empty), tooling.json, and
/// UTF-16 `.lproj/pass.strings` files. One copy for the content and build tests.
public enum PassDesignerFixture {
    public static let passJSON = #"""
        {
          "backgroundColor" : "rgb(30,30,60)",
          "barcodes" : [
            {
              "altText" : "{{ serialNumber }}",
              "format" : "PKBarcodeFormatQR",
              "message" : "https:\/\/tickets.example.com\/{{ serialNumber }}",
              "messageEncoding" : "iso-8859-1"
            }
          ],
          "description" : "Concert ticket",
          "eventTicket" : {
            "primaryFields" : [
              {
                "_id" : "6F1C2D3E-0A4B-4C5D-8E9F-0123456789AB",
                "key" : "event",
                "label" : "event_label",
                "value" : "{{ event }}"
              }
            ],
            "secondaryFields" : [
              {
                "_id" : "7A2B3C4D-1B5C-4D6E-9FA0-123456789ABC",
                "key" : "seat",
                "label" : "seat_label",
                "value" : "{{ seat }}"
              }
            ]
          },
          "foregroundColor" : "rgb(255,255,255)",
          "formatVersion" : 1,
          "organizationName" : "",
          "passTypeIdentifier" : "",
          "serialNumber" : "",
          "teamIdentifier" : ""
        }
        """#

    public static let toolingJSON =
        #"{"automaticallyGenerateCompatiblePass":false,"builderVersion":"0.0.1","designerVersion":"1.0"}"#

    /// The bundle's pass.strings by language, UTF-16 little-endian with a byte-order mark, as Pass Designer writes them.
    public static let strings: [(language: String, bytes: [UInt8])] = [
        ("en", utf16LE("\"event_label\" = \"Event\";\n\"seat_label\" = \"Seat\";\n")),
        ("de", utf16LE("\"event_label\" = \"Veranstaltung\";\n\"seat_label\" = \"Sitz\";\n")),
    ]

    /// Writes the bundle's pass.json, tooling.json and pass.strings as `bundle/…` with `write`.
    public static func write(
        bundle: String, text write: (String, String) -> Void, bytes writeBytes: (String, [UInt8]) -> Void
    ) {
        write("\(bundle)/pass.json", passJSON)
        write("\(bundle)/tooling.json", toolingJSON)
        for (language, bytes) in strings { writeBytes("\(bundle)/\(language).lproj/pass.strings", bytes) }
    }

    public static func utf16LE(_ text: String) -> [UInt8] {
        [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }
}
