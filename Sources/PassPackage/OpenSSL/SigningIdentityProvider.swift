package import PassModel

/// Where the certificate of a type identifier comes from: the build signs
/// with it, and push uses it as its APNs client identity (Apple: a pass
/// update uses the Pass Type ID certificate of its topic; vapor's order
/// service does the same with the Order Type ID certificate). The seam lets
/// push use the build's configuration without depending on the build.
package protocol SigningIdentityProvider: Sendable {
    /// The identity for items of `kind` and `typeIdentifier` by team `teamIdentifier` (a Pass Type ID or an
    /// Order Type ID certificate); `isDevelopment` when it is the development chain, which neither Wallet nor
    /// APNs accepts.
    func signingIdentity(typeIdentifier: String, teamIdentifier: String, kind: WalletItemKind) throws -> (identity: SigningIdentity, isDevelopment: Bool)
}
