/// Reads every registration of a store in a stable order: for copying a
/// store into another (`passforge migrate-store`).
package protocol RegistrationExport: Sendable {
    /// Every registration with its device's push token, in (device, pass
    /// type, serial) order, `limit` at a time after `after`.
    func exportRegistrations(after: ExportedRegistration?, limit: Int) async throws -> [ExportedRegistration]
}
