/// The keys Apple defines for one kind of object, for unknown-key warnings:
/// built once, since the pass's own keys and each field's are checked in every
/// pass of a build (a list for the spelling suggestions, a set for lookups).
struct KnownKeys: Sendable {
    let names: [String]
    private let lookup: Set<String>

    init(_ names: [String]) {
        self.names = names
        lookup = Set(names)
    }

    init<Keys: CaseIterable & RawRepresentable>(_ keys: Keys.Type) where Keys.RawValue == String {
        self.init(keys.allCases.map(\.rawValue))
    }

    func contains(_ key: String) -> Bool { lookup.contains(key) }
}

extension Pass {
    static let knownKeySet = KnownKeys(CodingKeys.self)
}

extension PassStructure {
    static let knownKeys = KnownKeys(CodingKeys.self)
}

extension Field {
    static let knownKeys = KnownKeys(CodingKeys.self)
}

extension Barcode {
    static let knownKeys = KnownKeys(CodingKeys.self)
}
