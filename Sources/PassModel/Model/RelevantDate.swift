/// An entry of `relevantDates` (iOS 18): either one moment (`date`) or an
/// interval of at most 24 hours (`startDate` … `endDate`).
public struct RelevantDate: Sendable, Hashable, Codable {
    public var date: W3CDate?
    public var startDate: W3CDate?
    public var endDate: W3CDate?

    public init(date: W3CDate) {
        self.date = date
    }

    public init(startDate: W3CDate, endDate: W3CDate) {
        self.startDate = startDate
        self.endDate = endDate
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case date, startDate, endDate
    }
}
