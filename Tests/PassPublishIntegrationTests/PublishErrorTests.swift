import Foundation
import TestSupport
import Testing

@testable import AtomicFiles
@testable import PassPublish

/// Each failure carries a code to match on, and the message the command line prints unchanged.
@Suite struct PublishErrorTests {
    @Test func aDestinationOfNoAcceptedFormIsInvalid() {
        let error = #expect(throws: PublishError.self) { try PublishDestination(parsing: "ftp://host/x") }
        #expect(error?.code == .invalidDestination)
        #expect(
            error?.description.contains("is not a destination passforge accepts") == true,
            "\(String(describing: error))")
        #expect(error?.file.hasSuffix("PublishDestination.swift") == true)
    }

    @Test func anOutputWithoutABuildSaysToBuildFirst() throws {
        let folder = TemporaryDirectory("passforge-nobuild")
        try AtomicFileSystem.createDirectory(folder.file("output"))
        let publisher = try Publisher(
            outputDirectory: folder.file("output"), destination: .directory(folder.file("site")))
        let error = #expect(throws: PublishError.self) { try publisher.publish() }
        #expect(error?.code == .noBuild)
        #expect(
            error?.description == "\(folder.file("output")) holds no build (no .passforge/); run passforge build first")
    }

    @Test func aFileSystemFailureKeepsItsCause() {
        let failure = AtomicFileSystem.Failure(path: "/x", operation: "open", code: ENOENT)
        let error = PublishError(failure)
        #expect(error.code == .fileSystem)
        #expect(error.description == failure.description)
        #expect(error.underlying is AtomicFileSystem.Failure)
    }
}
