import Testing

@testable import PassBuild
@testable import WalletTree

/// Tokens and download capabilities are HMAC-SHA256 of fixed messages: the
/// values here come from Python's hmac and base64 modules, so a change in how
/// they are computed (the keyed HMAC reused for every message, the base64url
/// writer) cannot go unnoticed — devices keep the tokens they were given.
@Suite struct TokenVectorTests {
    let secret = TokenSecret("vector-secret-0123456789", origin: "test")

    @Test func theTokenIsTheBase64URLOfTheHMACOfTypeAndSerial() {
        #expect(
            secret.authenticationToken(passTypeIdentifier: "pass.com.example.a", serialNumber: "S-1")
                == "0p3JiexOtpT-zeC13s7v_-fYK7NIEcdftUk8h23Swx4")
        // The keyed HMAC is copied per message, never carried over from the one before.
        #expect(
            secret.authenticationToken(passTypeIdentifier: "pass.com.example.a", serialNumber: "S-1")
                == "0p3JiexOtpT-zeC13s7v_-fYK7NIEcdftUk8h23Swx4")
    }

    @Test func theDownloadCapabilityIsTheFirst22CharactersOfItsHMAC() {
        #expect(
            secret.downloadCapability(passTypeIdentifier: "pass.com.example.a", serialNumber: "S-1")
                == "vPvX9MYbuPgOuBGcWkP6HO")
    }

    @Test(arguments: [
        ([UInt8](), ""), ([0xFF], "_w"), ([0xFB, 0xFF], "-_8"), ([0xFB, 0xFF, 0xBF], "-_-_"), ([0, 1, 2, 3], "AAECAw"),
    ])
    func base64URLHasNoPadding(bytes: [UInt8], expected: String) {
        #expect(base64URL(bytes) == expected)
    }
}
