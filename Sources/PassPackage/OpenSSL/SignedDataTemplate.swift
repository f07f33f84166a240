import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A detached CMS SignedData that `PKCS7Signer` made, with the three places
/// found that differ from one signature to the next of the same signer: the
/// signing time, the message digest and the RSA signature.
///
/// For one key and one form of signing time (UTCTime or GeneralizedTime) all
/// three have a fixed length, so every other byte (certificates, algorithm
/// identifiers, issuer and serial, the content-type attribute, every length)
/// is the same in each signature. The signed attributes keep their order
/// too: DER sorts a SET OF by encoding (X.690 §11.6), and the three
/// attributes' encodings already differ in their length byte (content type,
/// then signing time, then message digest), whatever the values.
struct SignedDataTemplate: Sendable {
    /// The whole SignedData (a ContentInfo), DER.
    let bytes: [UInt8]
    /// The signed attributes: `[0] IMPLICIT SET OF Attribute`, header included.
    let signedAttributes: Range<Int>
    /// The signing time's `Time` (tag, length and contents).
    let signingTime: Range<Int>
    /// The message digest attribute's 32 octets.
    let messageDigest: Range<Int>
    /// The contents of `encryptedDigest`: the RSA signature.
    let signature: Range<Int>

    /// Finds the places in `signedData`, which must be a detached SignedData
    /// with one signer, exactly the content-type, signing-time and
    /// message-digest signed attributes, `signingTime` and `messageDigest`
    /// as given, and a signature of `signatureLength` bytes. Nil otherwise.
    init?(signedData der: [UInt8], signingTime: DERTime, messageDigest: [UInt8], signatureLength: Int) {
        let reader = DERReader(der)
        guard let contentInfo = reader.node(at: 0, before: der.count), contentInfo.tag == 0x30,
            contentInfo.end == der.count,
            let outer = reader.children(of: contentInfo), outer.count == 2,
            outer[0].tag == 0x06, reader.contents(of: outer[0]) == DERReader.signedDataOID, outer[1].tag == 0xA0,
            let explicit = reader.children(of: outer[1]), explicit.count == 1, explicit[0].tag == 0x30,
            let signedData = reader.children(of: explicit[0]), let signerInfos = signedData.last,
            signerInfos.tag == 0x31,
            let signers = reader.children(of: signerInfos), signers.count == 1, signers[0].tag == 0x30,
            let signerFields = reader.children(of: signers[0]),
            let attributes = signerFields.first(where: { $0.tag == 0xA0 }),
            let encryptedDigest = signerFields.last, encryptedDigest.tag == 0x04,
            encryptedDigest.end - encryptedDigest.contentStart == signatureLength,
            let attributeList = reader.children(of: attributes), attributeList.count == 3
        else { return nil }

        var timeRange: Range<Int>?
        var digestRange: Range<Int>?
        var hasContentType = false
        for attribute in attributeList {
            guard attribute.tag == 0x30, let fields = reader.children(of: attribute), fields.count == 2,
                fields[0].tag == 0x06, fields[1].tag == 0x31,
                let values = reader.children(of: fields[1]), values.count == 1
            else { return nil }
            let value = values[0]
            switch reader.contents(of: fields[0]) {
            case DERReader.contentTypeOID:
                hasContentType = true
            case DERReader.signingTimeOID:
                guard Array(der[value.start..<value.end]) == signingTime.bytes else { return nil }
                timeRange = value.start..<value.end
            case DERReader.messageDigestOID:
                guard value.tag == 0x04, reader.contents(of: value) == messageDigest else { return nil }
                digestRange = value.contentStart..<value.end
            default:
                return nil
            }
        }
        guard hasContentType, let timeRange, let digestRange else { return nil }
        bytes = der
        signedAttributes = attributes.start..<attributes.end
        self.signingTime = timeRange
        self.messageDigest = digestRange
        signature = encryptedDigest.contentStart..<encryptedDigest.end
    }

    /// The SHA-256 that is signed: of the signed attributes as a DER
    /// `SET OF` (tag 0x31 rather than the `[0]` they are stored under,
    /// RFC 5652 §5.4), in `der`, which has this template's layout.
    func attributesDigest(in der: [UInt8]) -> [UInt8] {
        var attributes = Array(der[signedAttributes])
        attributes[0] = 0x31
        return Array(SHA256.hash(data: attributes))
    }

    /// This SignedData for another signing time (of the same form) and
    /// message digest, signed by `signer`. Nil when the signer fails.
    func signedData(signingTime: DERTime, messageDigest: SHA256Digest, signer: RSADigestSigner) -> [UInt8]? {
        guard signingTime.bytes.count == self.signingTime.count else { return nil }
        var der = bytes
        let signed = der.withUnsafeMutableBytes { buffer -> Bool in
            signingTime.bytes.withUnsafeBytes { time in
                UnsafeMutableRawBufferPointer(rebasing: buffer[self.signingTime]).copyMemory(from: time)
            }
            messageDigest.withUnsafeBytes { digest in
                UnsafeMutableRawBufferPointer(rebasing: buffer[self.messageDigest]).copyMemory(from: digest)
            }
            buffer[signedAttributes.lowerBound] = 0x31
            let attributesDigest = SHA256.hash(data: UnsafeRawBufferPointer(rebasing: buffer[signedAttributes]))
            buffer[signedAttributes.lowerBound] = 0xA0
            return attributesDigest.withUnsafeBytes { digest in
                signer.sign(digest: digest, into: UnsafeMutableRawBufferPointer(rebasing: buffer[signature]))
            }
        }
        return signed ? der : nil
    }
}

/// A signing time as DER, the way OpenSSL's `ASN1_TIME_set` encodes it:
/// UTCTime for the years 1950–2049, GeneralizedTime otherwise (RFC 5652
/// §11.3), in UTC, to the second.
struct DERTime: Sendable {
    /// Tag, length and contents.
    let bytes: [UInt8]
    /// 0x17 (UTCTime) or 0x18 (GeneralizedTime).
    var tag: UInt8 { bytes[0] }

    /// Nil for dates outside the years 0–9999.
    init?(_ date: Date) {
        guard var seconds = OpenSSL.seconds(date) else { return nil }
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else { return nil }
        let isUTCTime = (1950...2049).contains(year)
        var text: [UInt8] = []
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        if isUTCTime { append(year % 100, digits: 2) } else { append(year, digits: 4) }
        for part in [parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec] {
            append(Int(part), digits: 2)
        }
        text.append(UInt8(ascii: "Z"))
        bytes = [isUTCTime ? 0x17 : 0x18, UInt8(text.count)] + text
    }
}

/// Just enough of a DER reader to find the places `SignedDataTemplate` needs.
private struct DERReader {
    struct Node {
        let tag: UInt8
        let start: Int
        let contentStart: Int
        let end: Int
    }

    static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let contentTypeOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x03]
    static let messageDigestOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04]
    static let signingTimeOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x05]

    let der: [UInt8]
    init(_ der: [UInt8]) { self.der = der }

    /// The element at `offset`, which must end by `limit`.
    func node(at offset: Int, before limit: Int) -> Node? {
        guard offset >= 0, offset + 2 <= limit, limit <= der.count, der[offset] & 0x1F != 0x1F else { return nil }
        var cursor = offset + 2
        var length = Int(der[offset + 1])
        if length >= 0x80 {
            let octets = length & 0x7F
            guard (1...3).contains(octets), cursor + octets <= limit else { return nil }
            length = 0
            for index in 0..<octets { length = length << 8 | Int(der[cursor + index]) }
            cursor += octets
        }
        guard length <= limit - cursor else { return nil }
        return Node(tag: der[offset], start: offset, contentStart: cursor, end: cursor + length)
    }

    /// The elements inside a constructed `node`, or nil when they do not fill it exactly.
    func children(of node: Node) -> [Node]? {
        guard node.tag & 0x20 != 0 else { return nil }
        var nodes: [Node] = []
        var offset = node.contentStart
        while offset < node.end {
            guard let child = self.node(at: offset, before: node.end) else { return nil }
            nodes.append(child)
            offset = child.end
        }
        return nodes
    }

    func contents(of node: Node) -> [UInt8] {
        Array(der[node.contentStart..<node.end])
    }
}
