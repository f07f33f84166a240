import PassContent
import PassModel
import WalletTree

/// Applies PassModel's image rules to the files of a rendered pass.
enum ImageValidation {
    static func diagnostics(files: [PackageFile], passJSON: JSONValue) -> [Diagnostic] {
        // Without exactly one style the validator already reports the pass; images wait for that fix.
        let styles = PassStyle.allCases.filter { passJSON[$0.key] != nil }
        guard styles.count == 1 else { return [] }
        var bytes: [String: [UInt8]] = [:]
        for file in files { bytes[file.name] = file.bytes }
        return ImageRules.validate(files: bytes, pass: passJSON)
    }
}
