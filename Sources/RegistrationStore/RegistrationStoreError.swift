/// Why the registration store cannot be opened or used, for the person running passforge, with a `code` a
/// caller matches on (as swift-nio's `FileSystemError` has): the one error type of this target. A store's
/// driver errors stay their own (`PostgresStoreError`), wrapped where they reach people.
package struct RegistrationStoreError: Error, CustomStringConvertible, Sendable, Equatable {
    package enum Code: String, Sendable, Hashable {
        /// PASSFORGE_DATABASE_URL is of no form passforge reads.
        case invalidLocation
        /// Another push run holds the store's push lock.
        case pushLockBusy
    }

    package var code: Code
    package var message: String
    package var description: String { message }

    package init(_ code: Code, _ message: String) {
        (self.code, self.message) = (code, message)
    }

    /// Another push run holds the store's push lock.
    package static let pushLockBusy = RegistrationStoreError(
        .pushLockBusy,
        "another `passforge push` is running against this registration store; wait "
            + "for it to finish (it pushes every change up to now)")

    /// Whether `error` is this store's push lock held by another run.
    package static func isPushLockBusy(_ error: any Error) -> Bool {
        (error as? RegistrationStoreError)?.code == .pushLockBusy
    }
}
