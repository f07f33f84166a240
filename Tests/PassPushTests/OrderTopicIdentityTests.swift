import Foundation
import PassModel
import PassPackage
import PassPush
import TestSupport
import Testing
import WalletTree

/// An order type is pushed on its own topic with its Order Type ID certificate
/// (its UID is the order type identifier), and the pool's refusals name that
/// certificate — the state tells a topic's kind.
@Suite struct OrderTopicIdentityTests {
    /// Resolves every type identifier to one fixed certificate, as passforge.yml `signing:` would.
    struct FixedIdentities: APNsIdentityProvider {
        let leaf: TestPKI.Leaf
        func apnsCertificate(topic: String, teamIdentifier: String, kind: WalletItemKind) throws -> APNsCertificate {
            let identity = try SigningIdentity(
                certificatePath: leaf.certificate, keyPath: leaf.key, wwdrCertificatePath: TestPKI.shared.wwdr)
            return APNsCertificate(
                userID: identity.certificate.userID, subject: identity.certificate.subject,
                notBefore: identity.certificate.notBefore,
                notAfter: identity.certificate.notAfter,
                chainPEM: identity.certificatePEM + identity.wwdrCertificatePEM,
                privateKeyPEM: identity.exportPrivateKeyPEM(), isDevelopment: false)
        }
    }

    static func state(kind: WalletItemKind, type: String) -> PublishedIndex {
        var state = BuildState()
        let record = BuildState.ItemRecord(
            typeIdentifier: type, identifier: "O-1", teamIdentifier: TestPKI.team, updateTag: 1, etag: "\"00\"",
            size: 1,
            fingerprint: "0", definitionHash: "0", templateName: "shop", imagePaths: [], sourceFile: "content/o.yml",
            downloadPath: "download/x.\(kind.fileExtension)", kind: kind)
        state.passes[record.key] = record
        return PublishedIndex(state)
    }

    @Test func anOrderTopicWithAnotherTypesCertificateIsRefusedNamingTheOrderTypeIDCertificate() async throws {
        let pool = APNsClientPool(
            identities: FixedIdentities(leaf: TestPKI.shared.leaf()), configuration: APNsConfiguration())
        defer { Task { await pool.shutdown() } }
        do {
            _ = try await pool.sender(
                topic: TestPKI.orderType, index: Self.state(kind: .order, type: TestPKI.orderType))
            Issue.record("a Pass Type ID certificate was accepted for an order type")
        } catch {
            let message = "\(error)"
            #expect(message.contains("is for \(TestPKI.passType)"), "\(message)")
            #expect(message.contains("Configure the Order Type ID certificate of \(TestPKI.orderType)"), "\(message)")
            #expect(!message.contains("Pass Type ID certificate"), "\(message)")
        }
        // The same certificate for a pass type of another name: the pass's wording.
        do {
            _ = try await pool.sender(
                topic: "pass.com.example.other", index: Self.state(kind: .pass, type: "pass.com.example.other"))
            Issue.record("a certificate for another pass type was accepted")
        } catch {
            #expect("\(error)".contains("Configure the Pass Type ID certificate of pass.com.example.other"), "\(error)")
        }
    }

    @Test func anOrderTopicWithItsOrderTypeIDCertificateGetsAClient() async throws {
        let pool = APNsClientPool(
            identities: FixedIdentities(leaf: TestPKI.shared.leaf(passType: TestPKI.orderType)),
            configuration: APNsConfiguration())
        defer { Task { await pool.shutdown() } }
        _ = try await pool.sender(topic: TestPKI.orderType, index: Self.state(kind: .order, type: TestPKI.orderType))
    }

    @Test func apnsRefusalsNameTheOrderTypeIDCertificateForAnOrderClient() {
        let endpoint = try! APNsEndpoint(parsing: "https://api.push.apple.com")
        let rejected = APNsVerdict(
            APNsResponse(status: 403, reason: "BadCertificate"), topic: TestPKI.orderType, kind: .order,
            endpoint: endpoint)
        guard case .stop(let reason) = rejected else {
            Issue.record("403 is not a stop: \(rejected)")
            return
        }
        #expect(reason.message.contains("Use the Order Type ID certificate that signs the orders"), "\(reason.message)")
        let wrongTopic = APNsVerdict(
            APNsResponse(status: 400, reason: "TopicDisallowed"), topic: TestPKI.orderType, kind: .order,
            endpoint: endpoint)
        guard case .stop(let topicReason) = wrongTopic else {
            Issue.record("400 TopicDisallowed is not a stop: \(wrongTopic)")
            return
        }
        #expect(topicReason.message.contains("must be the orderTypeIdentifier of the orders"), "\(topicReason.message)")
    }
}
