import Testing

@testable import PassModel

@Suite struct DateRuleTests {
    @Test(arguments: ["relevantDate", "expirationDate"])
    func dateNeedsHoursAndMinutes(key: String) {
        let diagnostics = validate(minimalPass(.generic).setting(key, "2026-12-01"))
        #expect(problems(diagnostics) == ["error date.format @ \(key)"])
        #expect(
            diagnostics[0].message
                == "\(key) \"2026-12-01\" has a date but no time, and Wallet needs at least hours and minutes; write e.g. 2026-12-01T09:30Z"
        )
    }

    @Test(arguments: [
        "2026-12-01T09:30", "2026-12-01T09", "2026-13-01T09:30Z", "2026-02-29T09:30Z", "2026-12-01 09:30Z",
        "01/12/2026 09:30", "2026-12-01T24:00Z",
    ])
    func malformedDates(text: String) {
        #expect(
            problems(of: minimalPass(.generic).setting("relevantDate", .string(text))) == [
                "error date.format @ relevantDate"
            ])
    }

    @Test(arguments: [
        "2026-12-01T09:30Z", "2026-12-01T09:30:15+01:00", "2026-12-01T09:30:15.250-0800", "2028-02-29T00:00+05:30",
    ])
    func validDates(text: String) {
        #expect(problems(of: minimalPass(.generic).setting("expirationDate", .string(text))) == [])
    }

    @Test func dateMustBeAString() {
        #expect(
            problems(of: minimalPass(.generic).setting("relevantDate", 1_700_000_000)) == [
                "error key.type @ relevantDate"
            ])
    }

    func relevantDates(_ entries: JSONValue) -> [String] {
        problems(of: minimalPass(.eventTicket).setting("relevantDates", entries))
    }

    @Test func relevantDatesEntryNeedsDateOrInterval() {
        #expect(relevantDates([[:]]) == ["error relevantDates.entry @ relevantDates[0]"])
    }

    @Test func relevantDatesEntryCannotHaveBoth() {
        #expect(
            relevantDates([
                ["date": "2026-12-01T09:30Z", "startDate": "2026-12-01T09:30Z", "endDate": "2026-12-01T10:30Z"]
            ])
                == ["error relevantDates.entry @ relevantDates[0]"])
    }

    @Test func relevantDatesIntervalNeedsBothEnds() {
        #expect(
            relevantDates([["startDate": "2026-12-01T09:30Z"]]) == [
                "error relevantDates.entry @ relevantDates[0].endDate"
            ])
        #expect(
            relevantDates([["endDate": "2026-12-01T09:30Z"]]) == [
                "error relevantDates.entry @ relevantDates[0].startDate"
            ])
    }

    @Test func relevantDatesIntervalAtMost24Hours() {
        #expect(relevantDates([["startDate": "2026-12-01T09:30Z", "endDate": "2026-12-02T09:30Z"]]) == [])
        let diagnostics = validate(
            minimalPass(.eventTicket).setting(
                "relevantDates", [["startDate": "2026-12-01T09:30Z", "endDate": "2026-12-02T10:00Z"]]))
        #expect(problems(diagnostics) == ["error relevantDates.interval @ relevantDates[0].endDate"])
        #expect(diagnostics[0].message.contains("24.5 hours"))
    }

    @Test func relevantDatesIntervalRespectsTimeZones() {
        // 09:30+01:00 is 08:30Z, so this interval is 25 hours long.
        #expect(
            relevantDates([["startDate": "2026-12-01T09:30+01:00", "endDate": "2026-12-02T09:30Z"]]) == [
                "error relevantDates.interval @ relevantDates[0].endDate"
            ])
    }

    @Test func relevantDatesEndAfterStart() {
        #expect(
            relevantDates([["startDate": "2026-12-01T10:30Z", "endDate": "2026-12-01T10:30Z"]]) == [
                "error relevantDates.order @ relevantDates[0].endDate"
            ])
    }

    @Test func relevantDatesEntryDatesAreW3C() {
        #expect(relevantDates([["date": "tomorrow"]]) == ["error date.format @ relevantDates[0].date"])
    }

    @Test func relevantDatesMustBeAnArrayOfObjects() {
        #expect(relevantDates(["2026-12-01T10:30Z"]) == ["error key.type @ relevantDates[0]"])
    }
}

@Suite struct LocationRuleTests {
    let location: JSONValue = ["latitude": 51.5, "longitude": -0.12]

    func locations(_ value: JSONValue) -> [String] { problems(of: minimalPass(.storeCard).setting("locations", value)) }

    @Test func atMostTenLocations() {
        #expect(locations(.array(Array(repeating: location, count: 10))) == [])
        #expect(locations(.array(Array(repeating: location, count: 11))) == ["error locations.count @ locations"])
    }

    @Test func latitudeAndLongitudeRequired() {
        #expect(locations([["longitude": 1]]) == ["error location.latitude @ locations[0].latitude"])
        #expect(locations([["latitude": 1]]) == ["error location.longitude @ locations[0].longitude"])
    }

    @Test func coordinatesAreNumbers() {
        #expect(locations([location.setting("latitude", "51.5")]) == ["error key.type @ locations[0].latitude"])
    }

    @Test(arguments: [("latitude", 90.5), ("latitude", -91), ("longitude", 180.1), ("longitude", -200)])
    func coordinatesInRange(key: String, value: Double) {
        #expect(locations([location.setting(key, .double(value))]) == ["error location.\(key) @ locations[0].\(key)"])
    }

    @Test func altitudeAndRelevantTextTypes() {
        #expect(
            locations([location.setting("altitude", "high").setting("relevantText", 1)]) == [
                "error key.type @ locations[0].altitude", "error key.type @ locations[0].relevantText",
            ])
    }
}

@Suite struct BeaconRuleTests {
    let beacon: JSONValue = ["proximityUUID": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]

    func beacons(_ value: JSONValue) -> [String] { problems(of: minimalPass(.storeCard).setting("beacons", value)) }

    @Test func atMostTenBeacons() {
        #expect(beacons(.array(Array(repeating: beacon, count: 10))) == [])
        #expect(beacons(.array(Array(repeating: beacon, count: 11))) == ["error beacons.count @ beacons"])
    }

    @Test func proximityUUIDRequired() {
        #expect(beacons([["major": 1]]) == ["error beacon.proximityUUID @ beacons[0].proximityUUID"])
    }

    @Test(arguments: ["not-a-uuid", "E2C56DB5DFFB48D2B060D0F5A71096E0", "E2C56DB5-DFFB-48D2-B060-D0F5A71096EG"])
    func proximityUUIDFormat(uuid: String) {
        #expect(
            beacons([beacon.setting("proximityUUID", .string(uuid))]) == [
                "error beacon.proximityUUID @ beacons[0].proximityUUID"
            ])
    }

    @Test(arguments: [("major", 65536.0), ("major", -1), ("minor", 1.5), ("minor", 100_000)])
    func majorMinorRange(key: String, value: Double) {
        #expect(beacons([beacon.setting(key, .double(value))]) == ["error beacon.\(key) @ beacons[0].\(key)"])
    }

    @Test func majorMustBeANumber() {
        #expect(beacons([beacon.setting("major", "1")]) == ["error key.type @ beacons[0].major"])
    }
}

@Suite struct MaxDistanceRuleTests {
    @Test(arguments: [0, -5.5])
    func maxDistanceMustBePositive(distance: Double) {
        #expect(
            problems(of: minimalPass(.generic).setting("maxDistance", .double(distance))) == [
                "error maxDistance @ maxDistance"
            ])
    }

    @Test func maxDistanceMustBeANumber() {
        let diagnostics = validate(minimalPass(.generic).setting("maxDistance", "100"))
        #expect(problems(diagnostics) == ["error key.type @ maxDistance"])
        #expect(diagnostics[0].message.contains("write 100 without quotes"))
    }
}
