package import PassModel

/// `.passforge/bundles.json`: the `.pkpasses` bundles of the last build, by
/// name. One codec for the build (which remakes a bundle when its members
/// change) and publish (which compares the destination's list with its own).
package enum BundleList {
    package static let path = TreeLayout.bundleListPath
    /// Apple, "Distributing and updating a pass": a bundle is at most 150 MB.
    package static let maximumSize = 150 << 20

    /// The records of a bundles.json, by name; nil when the bytes are not a bundle list.
    package static func records(decoding bytes: [UInt8], greatestTag: Int64) throws(BuildError) -> [String:
        BundleRecord]?
    {
        guard let json = try? JSONValue(parsing: bytes), let list = json["bundles"]?.arrayValue else { return nil }
        var records: [String: BundleRecord] = [:]
        for item in list {
            guard let record = BundleRecord(json: item) else { continue }
            try record.check(greatestTag: greatestTag)
            records[record.name] = record
        }
        return records
    }
}

/// One `.pkpasses` bundle as the last build made it, as `.passforge/bundles.json` lists it.
package struct BundleRecord: Sendable, Equatable {
    package var name: String
    package var sourceFile: String
    /// SHA-256 of the content file that declared it.
    package var sourceHash: String
    /// Keys (`type/serial`) of its passes, in order.
    package var members: [String]
    /// The ETag of each member when the bundle was made.
    package var memberETags: [String]
    package var downloadPath: String
    package var etag: String
    package var size: Int
    package var updateTag: Int64

    package var json: JSONValue {
        .object(
            JSONObject([
                ("name", .string(name)), ("sourceFile", .string(sourceFile)), ("sourceHash", .string(sourceHash)),
                ("members", .array(members.map(JSONValue.string))),
                ("memberETags", .array(memberETags.map(JSONValue.string))),
                ("downloadPath", .string(downloadPath)), ("etag", .string(etag)), ("size", .int(size)),
                ("updateTag", .int(Int(updateTag))),
            ]))
    }

    package init(
        name: String, sourceFile: String, sourceHash: String, members: [String], memberETags: [String],
        downloadPath: String, etag: String, size: Int, updateTag: Int64
    ) {
        (self.name, self.sourceFile, self.sourceHash, self.members, self.memberETags) = (
            name, sourceFile, sourceHash, members, memberETags
        )
        (self.downloadPath, self.etag, self.size, self.updateTag) = (downloadPath, etag, size, updateTag)
    }

    /// The name is a bundle name, the path a bundle path, the members pass keys, the tag near now.
    package func check(greatestTag: Int64) throws(BuildError) {
        guard TreeLayout.isSerial(name) else {
            throw BuildError(
                .refused,
                "bundle \(BuildState.quoted(name)) has a name that does not match [A-Za-z0-9][A-Za-z0-9._~-]{0,127}")
        }
        guard TreeLayout.isCapabilityDownload(downloadPath, bundle: true) else {
            throw BuildError(
                .refused,
                "bundle \(name) has downloadPath \(BuildState.quoted(downloadPath)), which is not download/<capability>.pkpasses"
            )
        }
        guard updateTag >= 0, updateTag <= greatestTag else {
            throw BuildError(
                .refused,
                "bundle \(name) has updateTag \(updateTag), not an update tag of this build's time (0 to \(greatestTag))"
            )
        }
        guard (0...BundleList.maximumSize).contains(size) else {
            throw BuildError(.refused, "bundle \(name) has size \(size), beyond 0 to 150 MB")
        }
        try BuildState.checkText(sourceFile, "the content file of bundle \(name)")
        try BuildState.checkText(sourceHash, "sourceHash of bundle \(name)")
        for key in members where !TreeLayout.isPassKey(key) {
            throw BuildError(
                .refused,
                "bundle \(name) lists member \(BuildState.quoted(key)), which is not passTypeIdentifier/serialNumber")
        }
        for etag in memberETags { try BuildState.checkText(etag, "a member ETag of bundle \(name)") }
    }

    package init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue, let sourceFile = json["sourceFile"]?.stringValue,
            let sourceHash = json["sourceHash"]?.stringValue, let members = json["members"]?.arrayValue,
            let etags = json["memberETags"]?.arrayValue, let path = json["downloadPath"]?.stringValue,
            let etag = json["etag"]?.stringValue, case .int(let size)? = json["size"],
            case .int(let tag)? = json["updateTag"]
        else { return nil }
        self.init(
            name: name, sourceFile: sourceFile, sourceHash: sourceHash, members: members.compactMap(\.stringValue),
            memberETags: etags.compactMap(\.stringValue), downloadPath: path, etag: etag, size: size,
            updateTag: Int64(tag))
    }
}
