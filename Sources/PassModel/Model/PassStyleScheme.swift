/// A value of `preferredStyleSchemes`: a semantic-driven layout that Wallet
/// tries before the pass's own style. Wallet checks the pass against each
/// scheme it lists and falls back to the style when the pass meets none
/// ("preferredStyleSchemes" in Apple's Wallet Passes documentation).
package enum PassStyleScheme: String, CaseIterable, Sendable, Hashable, Codable {
    /// The iOS 18 poster layout of an event ticket.
    case posterEventTicket
    /// The boarding pass Wallet lays out from its semantic tags.
    case semanticBoardingPass

    /// The style a pass must have for Wallet to apply this scheme.
    package var style: PassStyle {
        switch self {
        case .posterEventTicket: return .eventTicket
        case .semanticBoardingPass: return .boardingPass
        }
    }

    /// Every value Wallet understands in `preferredStyleSchemes`: the two
    /// schemes and the style names (a pass lists its own style last, as the fallback).
    package static var knownValues: [String] { allCases.map(\.rawValue) + PassStyle.allCases.map(\.key) }

    /// The scheme whose rules apply to `pass`: `semanticBoardingPass` for a
    /// boarding pass that lists it, `posterEventTicket` for an event ticket
    /// that lists it, otherwise none. A boarding pass is judged as a
    /// boarding pass first, as Apple's validator does.
    package static func active(in pass: JSONValue) -> PassStyleScheme? {
        let listed = pass["preferredStyleSchemes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if pass[PassStyle.boardingPass.key] != nil {
            return listed.contains(semanticBoardingPass.rawValue) ? .semanticBoardingPass : nil
        }
        if pass[PassStyle.eventTicket.key] != nil {
            return listed.contains(posterEventTicket.rawValue) ? .posterEventTicket : nil
        }
        return nil
    }
}
