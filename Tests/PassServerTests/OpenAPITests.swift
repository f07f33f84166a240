import Foundation
import Hummingbird
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
        for route in Route.examples {
            let described = try #require(paths[route.template], "\(route.template) is not in openapi.yaml")
            for method in route.allowedMethods where method != .head {
                #expect(described[method.rawValue.lowercased()] != nil, "\(method) \(route.template) is not in openapi.yaml")
            }
        }
    }

    @Test func everyDescribedPathAndMethodIsARoute() throws {
        for (template, item) in try Self.paths() {
            let matched = Route.match(path: Self.concrete(template), basePath: "")
            guard case .success(let route) = matched else {
                Issue.record("openapi.yaml describes \(template), which the server does not route")
                continue
            }
            #expect(route.template == template)
            for method in Self.methods where item[method] != nil {
                #expect(route.allowedMethods.map { $0.rawValue.lowercased() }.contains(method), "\(method) \(template) is not answered")
            }
        }
    }

    @Test func theExamplesCoverEveryKindOfRoute() {
        let templates = Set(Route.examples.map(\.template))
        #expect(templates.count == Route.examples.count)
        for route in Route.examples {
            let matched = try? Route.match(path: Self.concrete(route.template), basePath: "").get()
            #expect(matched?.template == route.template)
        }
    }
}
