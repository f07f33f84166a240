/// What `register` did; the web service answers 201 for `.created` and 200 otherwise
/// (Apple: "If the serial number is already registered for this device, return
/// HTTP status 200. If registration succeeds, return HTTP status 201.").
package enum RegistrationOutcome: Sendable, Equatable {
    /// A new registration.
    case created
    /// Already registered; the device's push token was replaced by a new one.
    case pushTokenReplaced
    /// Already registered with the same push token: nothing changed.
    case unchanged
    /// `unregister` removed the registration.
    case removed
    /// `unregister` found no such registration.
    case notRegistered

    /// Whether the registrations (and so the device's index) changed.
    package var changesIndex: Bool { self == .created || self == .removed }
}
