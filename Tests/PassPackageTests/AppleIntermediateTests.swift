import PassPackage
import Testing

/// WWDR intermediates are named by generation in inspect's messages.
@Suite struct AppleIntermediateTests {
    @Test(arguments: [
        (
            "C=US, O=Apple Inc., OU=Apple Worldwide Developer Relations, CN=Apple Worldwide Developer Relations Certification Authority",
            "Apple WWDR G1"
        ),
        (
            "CN=Apple Worldwide Developer Relations CA - G2, OU=Apple Certification Authority, O=Apple Inc., C=US",
            "Apple WWDR G2"
        ),
        ("CN=Apple Worldwide Developer Relations Certification Authority, OU=G3, O=Apple Inc., C=US", "Apple WWDR G3"),
        ("CN=Apple Worldwide Developer Relations Certification Authority, OU=G4, O=Apple Inc., C=US", "Apple WWDR G4"),
        ("CN=Apple Worldwide Developer Relations Certification Authority, OU=G6, O=Apple Inc., C=US", "Apple WWDR G6"),
        ("CN=passforge Test WWDR, OU=G4, O=passforge tests", "\"passforge Test WWDR\""),
    ])
    func generations(subject: String, expected: String) {
        #expect(AppleIntermediate.shortName(subject: subject) == expected)
    }
}
