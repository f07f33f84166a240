package import PassContent
package import PassModel

/// The render API of `passforge preview` and `passforge diff`: every item of a project as the build would
/// package it, unsigned. The build (PassBuild) implements it with its own pipeline, whose consumer keeps each
/// render instead of signing it; the command line hands that in, so that preview and diff link neither the
/// signing stack (OpenSSL) nor the build.
package protocol UnsignedRenderer: Sendable {
    /// Renders and validates every item without signing or writing anything.
    func renderWithoutSigning() -> UnsignedRendering
}

/// One pass (or order) as the build would package it, before signing: for
/// `passforge preview` and `passforge diff`.
package struct UnsignedPass: Sendable {
    /// `passTypeIdentifier`, or an order's `orderTypeIdentifier`.
    package var passTypeIdentifier: String
    /// `serialNumber`, or an order's `orderIdentifier`.
    package var serialNumber: String
    package var templateName: String
    /// The content file that defines it.
    package var sourceFile: String
    /// The pass.json (order.json) the build would sign, authenticationToken included. An order's
    /// `updatedAt` is the signing build's, so it is absent here.
    package var passJSON: JSONValue
    /// Images and `<lang>.lproj/pass.strings` (`order.strings`), as they go into the package.
    package var files: [PackageFile]
    /// This pass's warnings (errors stop the build, and are in `UnsignedRendering.diagnostics`).
    package var warnings: [ContentDiagnostic]
    /// A pass or an order.
    package var kind: WalletItemKind = .pass

    /// `passTypeIdentifier/serialNumber` (`orderTypeIdentifier/orderIdentifier`), as the build state names items.
    package var key: String { "\(passTypeIdentifier)/\(serialNumber)" }

    package init(
        passTypeIdentifier: String, serialNumber: String, templateName: String, sourceFile: String, passJSON: JSONValue,
        files: [PackageFile], warnings: [ContentDiagnostic], kind: WalletItemKind = .pass
    ) {
        self.passTypeIdentifier = passTypeIdentifier
        self.serialNumber = serialNumber
        self.templateName = templateName
        self.sourceFile = sourceFile
        self.passJSON = passJSON
        self.files = files
        self.warnings = warnings
        self.kind = kind
    }
}

/// Every pass of a project rendered and validated as `passforge build` does
/// (the same loader, template cache, renderer and per-pass checks), signed
/// by nobody and written nowhere.
package struct UnsignedRendering: Sendable {
    /// The sound passes, in content order.
    package var passes: [UnsignedPass] = []
    /// Every problem, errors first-class: the build would refuse when one is an error.
    package var diagnostics: [ContentDiagnostic] = []
    /// Content files read, for the preview's watcher.
    package var contentFiles: [String] = []

    package var errors: [ContentDiagnostic] { diagnostics.filter(\.isError) }

    package init(passes: [UnsignedPass] = [], diagnostics: [ContentDiagnostic] = [], contentFiles: [String] = []) {
        (self.passes, self.diagnostics, self.contentFiles) = (passes, diagnostics, contentFiles)
    }
}
