/// Chooses the parser by file extension: `.json` is strict JSON, everything else YAML.
package enum SourceParser {
    package static func parse(_ bytes: [UInt8], file: String) throws(ContentDiagnostic) -> SourceNode {
        if file.hasSuffix(".json") { return try JSONSourceParser.parse(bytes, file: file) }
        return try YAMLSourceParser.parse(bytes, file: file)
    }
}
