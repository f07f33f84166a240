/// An entry of `relevantDates` (iOS 18): either one moment (`date`) or an
/// interval of at most 24 hours (`startDate` … `endDate`).
package struct RelevantDate: Sendable, Hashable, Codable {
    package var date: W3CDate?
    package var startDate: W3CDate?
    package var endDate: W3CDate?

    package init(date: W3CDate) {
        self.date = date
    }

    package init(startDate: W3CDate, endDate: W3CDate) {
        self.startDate = startDate
        self.endDate = endDate
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case date, startDate, endDate
    }
}
