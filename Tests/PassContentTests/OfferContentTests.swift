import PassModel
import Testing

@testable import PassContent

/// `deviceCheck:` and `offers:` in passforge.yml, `offer:` in content (DeviceCheck offers).
@Suite struct OfferContentTests {
    func configuration(_ text: String) throws -> ProjectConfiguration {
        try ProjectConfiguration.parse(
            try YAMLSourceParser.parse(Array(text.utf8), file: "proj/passforge.yml"), file: "proj/passforge.yml")
    }

    /// The problems of a configuration that must be refused.
    func problems(_ text: String) -> [ContentDiagnostic] {
        do {
            _ = try configuration(text)
            return []
        } catch {
            return (error as? ContentErrors)?.diagnostics ?? []
        }
    }

    @Test func readsDeviceCheckAndOffers() throws {
        let config = try configuration(
            """
            passTypeIdentifier: pass.com.example
            deviceCheck:
              teamIdentifier: ABCDE12345
              keyIdentifier: KEY1234567
              privateKey: keys/AuthKey_KEY1234567.p8
              environment: development
            offers:
              welcome-coupon:
                bit: 0
              free-drink: { bit: 1 }
            """)
        #expect(config.deviceCheck?.teamIdentifier == "ABCDE12345" && config.deviceCheck?.keyIdentifier == "KEY1234567")
        #expect(
            config.deviceCheck?.privateKeyPath == "proj/keys/AuthKey_KEY1234567.p8"
                && config.deviceCheck?.environment == "development")
        #expect(config.offers.map(\.name) == ["welcome-coupon", "free-drink"] && config.offers.map(\.bit) == [0, 1])
        #expect(
            try configuration("deviceCheck: {teamIdentifier: ABCDE12345, keyIdentifier: KEY1234567}").deviceCheck?
                .environment == "production")
    }

    @Test func aBitOtherThan0Or1IsAnErrorAtItsLine() {
        for bit in ["2", "-1", "\"0\"", "true", "0.5"] {
            let found = problems(
                """
                offers:
                  welcome-coupon:
                    bit: \(bit)
                """)
            #expect(
                found.count == 1 && found[0].rule == "config.offer-bit" && found[0].location.line == 3,
                "\(bit): \(found)")
        }
        let missing = problems("offers:\n  welcome-coupon: {}\n")
        #expect(missing.first?.rule == "config.offer-bit" && missing.first?.location.line == 2)
    }

    @Test func badOfferNamesAndDeviceCheckSettingsAreRefused() {
        #expect(problems("offers:\n  \"bad name\": { bit: 0 }\n").first?.rule == "config.offer")
        #expect(problems("offers:\n  welcome: { bit: 0, pool: 5 }\n").first?.rule == "config.unknown-key")
        #expect(
            problems("deviceCheck: {teamIdentifier: abc, keyIdentifier: KEY1234567}\n").first?.rule
                == "config.deviceCheck")
        #expect(problems("deviceCheck: {keyIdentifier: KEY1234567}\n").first?.rule == "config.deviceCheck")
        #expect(
            problems("deviceCheck: {teamIdentifier: ABCDE12345, keyIdentifier: KEY1234567, environment: staging}\n")
                .first?.rule
                == "config.deviceCheck")
        #expect(
            problems("deviceCheck: {teamIdentifier: ABCDE12345, keyIdentifier: KEY1234567, key: x}\n").first?.rule
                == "config.unknown-key")
    }

    @Test func offerOnASinglePassAndOnAList() {
        let single = ContentLoader.definitions(
            in: "content/a.yml",
            bytes: Array(
                """
                template: coupon
                serialNumber: C-1
                offer: welcome-coupon
                """.utf8))
        #expect(single.problems.isEmpty && single.definitions.first?.offer?.name == "welcome-coupon")
        #expect(single.definitions.first?.offer?.location.line == 3)

        let list = ContentLoader.definitions(
            in: "content/b.yml",
            bytes: Array(
                """
                template: coupon
                offer: welcome-coupon
                passes:
                  - serialNumber: C-1
                  - serialNumber: C-2
                """.utf8))
        #expect(
            list.problems.isEmpty && list.definitions.map { $0.offer?.name } == ["welcome-coupon", "welcome-coupon"])

        let bad = ContentLoader.definitions(
            in: "content/c.yml", bytes: Array("template: coupon\nserialNumber: C-1\noffer: [x]\n".utf8))
        #expect(
            bad.definitions.isEmpty && bad.problems.first?.rule == "content.offer"
                && bad.problems.first?.location.line == 3)
    }

    @Test func movingAPassIntoAnOfferChangesItsDefinition() {
        let plain = ContentLoader.definitions(
            in: "content/a.yml", bytes: Array("template: coupon\nserialNumber: C-1\n".utf8))
        let offered = ContentLoader.definitions(
            in: "content/a.yml", bytes: Array("template: coupon\nserialNumber: C-1\noffer: w\n".utf8))
        #expect(plain.definitions[0].canonicalBytes != offered.definitions[0].canonicalBytes)
    }
}
