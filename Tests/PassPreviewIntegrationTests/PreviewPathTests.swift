import Foundation
import PassPreview
import TestSupport
import Testing

/// issue 31: `/index.html%00.png` was served as `index.html` (the C library
/// ends a file name at its NUL). A decoded control character in a path is
/// refused before any file is looked up.
@Suite("the paths preview --watch answers")
struct PreviewPathTests {
    @Test("a decoded NUL or other control character, a stray %, or bytes that are not UTF-8: refused")
    func pathRule() {
        let accepted = [
            "/", "/index.html", "/pass.com.example/BL-M-0001.html", "/caf%C3%A9.html", "/a%20b.html",
            "/%7E.html",
        ]
        for path in accepted {
            #expect(PreviewPathRule.isAcceptable(path), "\(path)")
        }
        let refused = [
            "/index.html%00.png", "/index.html%00", "/%00", "/index.html%0a", "/index.html%0D%0A", "/a%09b",
            "/a%1Fb", "/a%7Fb", "/a%C2%85b", "/a%C2%9Fb", "/a%", "/a%4", "/a%zz", "/a%FF.html", "/a%C3.html",
        ]
        for path in refused {
            #expect(!PreviewPathRule.isAcceptable(path), "\(path)")
        }
    }

    @Test("--watch: /index.html%00.png and other control characters get 400, never a page")
    func watchServerRefusesControlCharacters() async throws {
        let project = try exampleProject()
        let server = try await WatchServer(project: project)
        defer { server.stop() }
        let index = try await Curl.get(server.base + "index.html")
        #expect(index.status == 200)
        let hostile = [
            "index.html%00.png", "index.html%00", "index.html%00.html", "%00", "index.html%0a",
            "index.html%C2%85", "pass.com.example.passforge/BL-M-0001.html%00.css", "index.html%",
        ]
        for path in hostile {
            let answer = try await Curl.get(server.base + path)
            #expect(answer.status == 400, "/\(path): \(answer.status)")
            #expect(!answer.body.contains("<html"), "/\(path) shows a page")
            #expect(answer.header("X-Content-Type-Options") == "nosniff", "/\(path)")
        }
    }
}
