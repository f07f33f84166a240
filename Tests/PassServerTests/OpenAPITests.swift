import Foundation
import Hummingbird
import HummingbirdTesting
import PassServer
import Testing
import Yams

/// openapi.yaml and the server agree: every route the matcher answers is
/// described with each of its methods, and every described path and method
/// is one the matcher answers.
@Suite struct OpenAPITests {
    static let specificationPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("openapi.yaml").path

    static func paths() throws -> [String: [String: Any]] {
        let text = try String(contentsOfFile: specificationPath, encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        return try #require(document["paths"] as? [String: [String: Any]])
    }

    static let methods = ["get", "head", "post", "put", "delete", "patch", "options"]

    /// A concrete path for a template: a value that matches each parameter's pattern.
    static func concrete(_ template: String) -> String {
        template
            .replacingOccurrences(of: "{deviceLibraryIdentifier}", with: "d1")
            .replacingOccurrences(of: "{passTypeIdentifier}", with: "pass.com.example")
            .replacingOccurrences(of: "{serialNumber}", with: "S-1")
            .replacingOccurrences(of: "{orderTypeIdentifier}", with: "order.com.example")
            .replacingOccurrences(of: "{orderIdentifier}", with: "O-1")
            .replacingOccurrences(of: "{capability}", with: "AAAAAAAAAAAAAAAAAAAAAA.pkpass")
            .replacingOccurrences(of: "{publicName}", with: "S-1.pkpass")
            .replacingOccurrences(of: "{offer}", with: "welcome-coupon")
    }

    @Test func everyRouteIsDescribedWithEachOfItsMethods() throws {
        let paths = try Self.paths()
        for route in Route.all {
            let described = try #require(paths[route.template], "\(route.template) is not in openapi.yaml")
            for method in route.allowedMethods where method != .head {
                #expect(
                    described[method.rawValue.lowercased()] != nil, "\(method) \(route.template) is not in openapi.yaml"
                )
            }
        }
    }

    @Test func everyDescribedPathAndMethodIsARoute() throws {
        let routes = Dictionary(uniqueKeysWithValues: Route.all.map { ($0.template, $0) })
        for (template, item) in try Self.paths() {
            guard let route = routes[template] else {
                Issue.record("openapi.yaml describes \(template), which the server does not route")
                continue
            }
            for method in Self.methods where item[method] != nil {
                #expect(
                    route.allowedMethods.map { $0.rawValue.lowercased() }.contains(method),
                    "\(method) \(template) is not answered")
            }
        }
    }

    /// The server's router answers each described path and method (never its 404 or 405 of no route),
    /// and answers 405 to the methods not described.
    @Test func theRouterAnswersEveryDescribedPathAndMethod() async throws {
        let fixture = try ServiceStatusTests.Fixture()
        // Which methods each template describes (`[String: Any]` is not Sendable).
        let paths = try Self.paths().mapValues { item in Set(Self.methods.filter { item[$0] != nil }) }
        try await RouteStatusTests.application(fixture).test(.router) { client in
            for (template, item) in paths {
                for method in Self.methods {
                    let httpMethod = HTTPRequest.Method(method.uppercased())!
                    let described = item.contains(method) || (method == "head" && item.contains("get"))
                    try await client.execute(uri: Self.concrete(template), method: httpMethod) { response in
                        if described {
                            #expect(response.status != .methodNotAllowed, "\(method) \(template)")
                            let body = String(buffer: response.body)
                            #expect(
                                !body.contains("no such resource") || template.hasPrefix("/download")
                                    || template.hasPrefix("/v1/offers"), "\(method) \(template)")
                        } else {
                            #expect(response.status == .methodNotAllowed, "\(method) \(template)")
                        }
                    }
                }
            }
        }
    }
}
