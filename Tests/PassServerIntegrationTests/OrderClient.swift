import NIOHTTP1

/// The order calls of Apple's Wallet Orders web service, as a device makes them.
extension Client {
    func registerOrder(
        _ device: String, _ type: String, _ identifier: String, token: String, pushToken: String,
        scheme: String = "AppleOrder"
    ) async throws -> Answer {
        try await send(
            .POST, "/v1/devices/\(device)/registrations/\(type)/\(identifier)",
            headers: ["Authorization": "\(scheme) \(token)", "Content-Type": "application/json"],
            body: Array(#"{"pushToken":"\#(pushToken)"}"#.utf8))
    }

    func unregisterOrder(
        _ device: String, _ type: String, _ identifier: String, token: String,
        scheme: String = "AppleOrder"
    ) async throws -> Answer {
        try await send(
            .DELETE, "/v1/devices/\(device)/registrations/\(type)/\(identifier)",
            headers: ["Authorization": "\(scheme) \(token)"])
    }

    func orderIdentifiers(_ device: String, _ type: String, since: String? = nil) async throws -> Answer {
        try await send(
            .GET, "/v1/devices/\(device)/registrations/\(type)" + (since.map { "?ordersModifiedSince=\($0)" } ?? ""))
    }

    func order(
        _ type: String, _ identifier: String, token: String?, scheme: String = "AppleOrder",
        headers: [String: String] = [:]
    ) async throws -> Answer {
        var headers = headers
        if let token { headers["Authorization"] = "\(scheme) \(token)" }
        return try await send(.GET, "/v1/orders/\(type)/\(identifier)", headers: headers)
    }
}
