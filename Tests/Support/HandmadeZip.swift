// Zip archives made by hand for reader tests.

private let crcTable: [UInt32] = (0..<256).map { index in
    (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
}

public func crc32(_ bytes: [UInt8]) -> UInt32 {
    ~bytes.reduce(~UInt32(0)) { crc, byte in crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
}

private func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

/// A zip of stored entries, written here independently of passforge's
/// writer, for layouts passforge never writes; with `dataDescriptor`, each local header sets
/// general-purpose bit 3 and still carries the sizes, and a data descriptor
/// follows the data: the layout Dart's `archive` package writes.
public func storedZip(_ entries: [(String, [UInt8])]) -> [UInt8] { makeZip(entries, dataDescriptor: false) }
public func dataDescriptorZip(_ entries: [(String, [UInt8])]) -> [UInt8] { makeZip(entries, dataDescriptor: true) }

private func makeZip(_ entries: [(String, [UInt8])], dataDescriptor: Bool) -> [UInt8] {
    var out: [UInt8] = []
    var central: [UInt8] = []
    let flags = dataDescriptor ? 0x0008 : 0
    for (name, bytes) in entries {
        let offset = UInt32(out.count)
        let crc = crc32(bytes)
        let nameBytes = Array(name.utf8)
        let common =
            le16(20) + le16(flags) + le16(0) + le16(0) + le16(0x21) + le32(crc) + le32(UInt32(bytes.count))
            + le32(UInt32(bytes.count))
            + le16(nameBytes.count) + le16(0)
        out += le32(0x0403_4B50) + common + nameBytes + bytes
        if dataDescriptor {
            out += le32(0x0807_4B50) + le32(crc) + le32(UInt32(bytes.count)) + le32(UInt32(bytes.count))
        }
        central +=
            le32(0x0201_4B50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset) + nameBytes
    }
    let centralOffset = UInt32(out.count)
    out += central
    out +=
        le32(0x0605_4B50) + le16(0) + le16(0) + le16(entries.count) + le16(entries.count)
        + le32(UInt32(central.count)) + le32(centralOffset) + le16(0)
    return out
}
