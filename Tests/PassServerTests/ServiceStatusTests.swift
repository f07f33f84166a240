import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PassBuild
import PassModel
import PassServer
import SQLiteRegistrationStore
import TestSupport
import Testing
import WalletTree

/// Every status code of the pass and order web service, in process: the
/// application passforge serve runs, driven through HummingbirdTesting's
/// router client (no socket, no process), over a tree the real build made.
@Suite struct ServiceStatusTests {
    static let secret = "service-status-token-secret-0123456789"

    /// A built project with passes and orders, its tokens, and a store.
    final class Fixture: Sendable {
        let project = ProjectFixture(passCount: 2)
        let state = TemporaryDirectory("passforge-service-state")
        let passToken: String
        let orderToken: String
        let passETag: String
        let orderETag: String

        init() throws {
            project.addOrderTemplate()
            project.writeOrder("SO-1")
            let settings = try BuildSettings(
                projectFolder: project.root,
                environment: TestPKI.shared.environment(TestPKI.shared.leaf(), secret: ServiceStatusTests.secret),
                jobs: 2)
            _ = try PassBuilder(settings: settings).build()
            let built = try BuildState.load(from: project.output)
            let pass = try #require(built.passes["\(TestPKI.passType)/C-0000"])
            let order = try #require(built.passes["\(TestPKI.orderType)/SO-1"])
            let token = TokenSecret(ServiceStatusTests.secret, origin: "test")
            passToken = token.authenticationToken(passTypeIdentifier: TestPKI.passType, serialNumber: "C-0000")
            orderToken = token.authenticationToken(passTypeIdentifier: TestPKI.orderType, serialNumber: "SO-1")
            (passETag, orderETag) = (pass.etag, order.etag)
        }

        func application() throws -> some ApplicationProtocol {
            var configuration = PassServerConfiguration()
            let store = try SQLiteRegistrationStore(path: state.file("registrations.sqlite"))
            return PassServer.application(
                configuration: configuration, output: OutputFolder(directory: project.output), store: store,
                logger: Logger(label: "test"))
        }
    }

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func passesAnswerEveryStatusApplesReferenceNames() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let path = "/v1/passes/\(TestPKI.passType)/C-0000"
            let auth: HTTPFields = [.authorization: "ApplePass \(fixture.passToken)"]
            try await client.execute(uri: path, method: .get, headers: auth) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/vnd.apple.pkpass")
                #expect(response.headers[.eTag] == fixture.passETag)
            }
            var conditional = auth
            conditional[.ifNoneMatch] = fixture.passETag
            try await client.execute(uri: path, method: .get, headers: conditional) {
                #expect($0.status == .notModified)
            }
            // A wrong token, no token, an unknown pass: the same 401.
            for headers: HTTPFields in [[.authorization: "ApplePass wrong-token-0123456789"], [:]] {
                try await client.execute(uri: path, method: .get, headers: headers) {
                    #expect($0.status == .unauthorized)
                }
            }
            try await client.execute(uri: "/v1/passes/\(TestPKI.passType)/NOPE", method: .get, headers: auth) {
                #expect($0.status == .unauthorized)
            }
            // The order scheme on a pass is refused too.
            try await client.execute(
                uri: path, method: .get, headers: [.authorization: "AppleOrder \(fixture.passToken)"]
            ) {
                #expect($0.status == .unauthorized)
            }
            let registration = "/v1/devices/device0001/registrations/\(TestPKI.passType)/C-0000"
            let push = Self.body(#"{"pushToken":"0123456789abcdef0123456789abcdef"}"#)
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/v1/devices/device0001/registrations/\(TestPKI.passType)", method: .get) {
                response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""serialNumbers":["C-0000"]"#))
            }
            try await client.execute(
                uri: "/v1/devices/device0001/registrations/\(TestPKI.passType)?passesUpdatedSince=99999999999999",
                method: .get
            ) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: registration, method: .delete, headers: [:]) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: registration, method: .delete, headers: auth) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v1/log", method: .post, body: Self.body(#"{"logs":["hello"]}"#)) {
                #expect($0.status == .ok)
            }
        }
    }

    @Test func ordersAnswerEveryStatusApplesReferenceNames() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let path = "/v1/orders/\(TestPKI.orderType)/SO-1"
            let auth: HTTPFields = [.authorization: "AppleOrder \(fixture.orderToken)"]
            try await client.execute(uri: path, method: .get, headers: auth) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/vnd.apple.finance.order")
                #expect(response.headers[.eTag] == fixture.orderETag)
                let lastModified = try #require(response.headers[.lastModified])
                var conditional = auth
                conditional[.ifModifiedSince] = lastModified
                try await client.execute(uri: path, method: .get, headers: conditional) {
                    #expect($0.status == .notModified)
                }
            }
            for headers: HTTPFields in [
                [.authorization: "AppleOrder wrong-token-0123456789"], [:],
                [.authorization: "ApplePass \(fixture.orderToken)"],
            ] {
                try await client.execute(uri: path, method: .get, headers: headers) {
                    #expect($0.status == .unauthorized)
                }
            }
            try await client.execute(uri: "/v1/orders/\(TestPKI.orderType)/SO-404", method: .get, headers: auth) {
                #expect($0.status == .unauthorized)
            }
            let registration = "/v1/devices/device0002/registrations/\(TestPKI.orderType)/SO-1"
            let push = Self.body(#"{"pushToken":"0123456789abcdef0123456789abcdef"}"#)
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .created)
            }
            try await client.execute(uri: registration, method: .post, headers: auth, body: push) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/v1/devices/device0002/registrations/\(TestPKI.orderType)", method: .get) {
                response in
                #expect(response.status == .ok)
                let body = String(buffer: response.body)
                #expect(body.contains(#""orderIdentifiers":["SO-1"]"#) && body.contains(#""lastModified":"#))
            }
            try await client.execute(
                uri: "/v1/devices/device0002/registrations/\(TestPKI.orderType)?ordersModifiedSince=99999999999999",
                method: .get
            ) {
                #expect($0.status == .noContent)
            }
            try await client.execute(
                uri: registration, method: .delete, headers: [.authorization: "ApplePass \(fixture.orderToken)"]
            ) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: registration, method: .delete, headers: auth) { #expect($0.status == .ok) }
        }
    }
}
