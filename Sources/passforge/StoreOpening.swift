import ArgumentParser
import AtomicFiles
import ConcurrencySupport
import Foundation
import PassContent
import PostgresRegistrationStore
import RegistrationStore
import SQLiteRegistrationStore

/// The registration store named by PASSFORGE_DATABASE_URL (default
/// `state/registrations.sqlite` in the project's root), shared by `serve` and `build`.
enum StoreOpening {
    /// Opens the store of `project`. With `onlyIfPresent`, a SQLite file that does not exist
    /// yet is not created (a build on a machine without a server has no devices). A SQLite store's
    /// commits run on `pool`, the command's `BlockingPool`.
    static func open(project: Project, onlyIfPresent: Bool = false, pool: BlockingPool)
        async throws -> (store: any RegistrationDatabase, description: String)?
    {
        try await open(
            ProcessInfo.processInfo.environment[StoreLocation.environmentVariable],
            defaultSQLitePath: defaultSQLitePath(of: project), onlyIfPresent: onlyIfPresent, pool: pool)
    }

    /// `state/registrations.sqlite` below the project's root (not the working directory): `--config` run
    /// from another folder finds the project's store.
    static func defaultSQLitePath(of project: Project) -> String { project.path(StoreLocation.defaultSQLitePath) }

    /// Opens the store a PASSFORGE_DATABASE_URL-style value names; a path in it is relative to the working
    /// directory, as a path typed in a shell is. No value: `defaultSQLitePath`.
    static func open(
        _ value: String?, defaultSQLitePath: String = StoreLocation.defaultSQLitePath, onlyIfPresent: Bool = false,
        pool: BlockingPool
    ) async throws -> (store: any RegistrationDatabase, description: String)? {
        let location: StoreLocation
        do {
            let given = value?.trimmingWhitespace() ?? ""
            location = given.isEmpty ? .sqlite(path: defaultSQLitePath) : try StoreLocation(given)
        } catch {
            Console.error("error: \(error)")
            throw ExitCode.failure
        }
        switch location {
        case .sqlite(let path):
            if onlyIfPresent && !AtomicFileSystem.exists(path) { return nil }
            do {
                return (try SQLiteRegistrationStore(path: path, blockingPool: pool), location.description)
            } catch {
                Console.error(
                    "error: cannot open the registration store \(path): \(error); check that its folder is writable")
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
