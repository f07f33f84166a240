import AtomicFiles
import ArgumentParser
import Foundation
import PostgresRegistrationStore
import RegistrationStore
import SQLiteRegistrationStore

/// The registration store named by PASSFORGE_DATABASE_URL (default
/// `state/registrations.sqlite`), shared by `serve` and `build`.
enum StoreOpening {
    /// Opens the store. With `onlyIfPresent`, a SQLite file that does not exist
    /// yet is not created (a build on a machine without a server has no devices).
    static func open(onlyIfPresent: Bool = false) async throws -> (store: any RegistrationDatabase, description: String)? {
        try await open(ProcessInfo.processInfo.environment[StoreLocation.environmentVariable], onlyIfPresent: onlyIfPresent)
    }

    /// Opens the store a PASSFORGE_DATABASE_URL-style value names.
    static func open(_ value: String?, onlyIfPresent: Bool = false) async throws -> (store: any RegistrationDatabase, description: String)? {
        let location: StoreLocation
        do {
            location = try StoreLocation(value)
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
        switch location {
        case .sqlite(let path):
            if onlyIfPresent && !AtomicFileSystem.exists(path) { return nil }
            do {
                return (try SQLiteRegistrationStore(path: path), location.description)
            } catch {
                Console.error("error: cannot open the registration store \(path): \(error); check that its folder is writable")
                throw ExitCode.failure
            }
        case .postgres(let url):
            do {
                return (try await PostgresRegistrationStore.connect(url: url), location.description)
            } catch {
                // PostgresStoreError says what is wrong (unreachable, credentials, database) without the password.
                Console.error("error: cannot open the registration store: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
