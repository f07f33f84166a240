import AtomicFiles
import Foundation
import PassModel

/// What a `.pkpasstemplate` bundle saved by Apple's Pass Designer holds
/// beyond a plain template folder, and how passforge reads it.
///
/// The bundle is a folder: pass.json (sorted keys, an `_id` in every field,
/// seat and featured action), `tooling.json` (the editor's versions), the
/// images and `<lang>.lproj` folders. Pass Designer has no placeholder
/// syntax of its own: a designer types `{{ name }}` into a text field and
/// passforge fills it from the content file's `data:`, as in any template.
enum DesignerTemplate {
    /// Whether a file at the top of the bundle is passforge's business.
    struct Handling {
        var skip: Bool
        var problems: [ContentDiagnostic] = []
    }

    static func handling(of entry: String, at path: String) -> Handling {
        if entry == "tooling.json" {
            // The editor's own record; not part of a pass Wallet reads.
            guard let bytes = AtomicFileSystem.readFile(path),
                let json = try? JSONValue(parsing: bytes),
                json["automaticallyGenerateCompatiblePass"] == .bool(true)
            else { return Handling(skip: true) }
            return Handling(
                skip: true,
                problems: [
                    .warning(
                        at: SourceLocation(file: path), rule: "template.designer-compatibility",
                        "Pass Designer asks for a compatibility variant for earlier iOS "
                            + "(automaticallyGenerateCompatiblePass); passforge builds one pass from this "
                            + "template, so check it on the oldest iOS you support")
                ])
        }
        if entry.lowercased().hasSuffix(".pdf") {
            let png = String(entry.dropLast(4)) + ".png"
            return Handling(
                skip: true,
                problems: [
                    .error(
                        at: SourceLocation(file: path), rule: "template.designer-pdf",
                        "\(entry) is a PDF image; passforge packages PNG images only, so export it from "
                            + "Pass Designer as \(png) (same name, PNG) and remove the PDF")
                ])
        }
        return Handling(skip: false)
    }

    /// The bundle's pass.json as a template: without Pass Designer's `_id`
    /// keys (not part of Apple's pass format), and without top-level keys
    /// left empty (`"serialNumber": ""`), so that passforge.yml and the
    /// content file supply them.
    static func normalized(_ root: SourceNode) -> SourceNode {
        guard case .object(let members) = root.kind else { return root }
        let kept = members.filter { $0.value.scalarValue != .string("") }
            .map { member in
                member.key == "userInfo"
                    ? member
                    : SourceNode.Member(
                        key: member.key, keyLocation: member.keyLocation, value: withoutDesignerIDs(member.value))
            }
        return SourceNode(.object(kept), at: root.location)
    }

    private static func withoutDesignerIDs(_ node: SourceNode) -> SourceNode {
        switch node.kind {
        case .scalar: return node
        case .array(let elements): return SourceNode(.array(elements.map(withoutDesignerIDs)), at: node.location)
        case .object(let members):
            return SourceNode(
                .object(
                    members.filter { $0.key != "_id" }.map {
                        SourceNode.Member(key: $0.key, keyLocation: $0.keyLocation, value: withoutDesignerIDs($0.value))
                    }), at: node.location)
        }
    }
}
