import AtomicFiles

/// Why a publish or a state fetch stopped, written for the person running it: what failed and what to do
/// (`message`, which is all the command line prints), with a `code` a caller or test can match on, the
/// error underneath when there was one, and where in passforge it was raised (as swift-nio's
/// `FileSystemError` carries them).
package struct PublishError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure it is; the message says which file, host or object.
    package enum Code: String, Sendable, Hashable {
        /// The output folder holds no build (no `.passforge/` or no state): build first.
        case noBuild
        /// The local tree does not match its build state (a file missing, another ETag, a damaged list).
        case localTreeMismatch
        /// DEST is not a form passforge accepts, or its settings (ssh command, S3 configuration) are not.
        case invalidDestination
        /// DEST's folder does not exist (a mistyped path must not count as a first deploy).
        case destinationMissing
        /// DEST is the output tree itself.
        case destinationIsOutput
        /// DEST holds a newer build than the local one.
        case newerAtDestination
        /// A path at DEST or here is a link, not a regular file or folder, or not a build-owned path.
        case unsafePath
        /// What DEST sent is larger than a published build's file may be.
        case tooLarge
        /// DEST's build state or lists are refused (damaged, hostile, or of an unknown form).
        case invalidPublishedState
        /// Another publish or a build holds the lock.
        case locked
        /// A program publish needs (ssh, rsync) is not installed here or on the host.
        case programMissing
        /// The host refused or failed: login, host key, unreachable, permission, disk full, an exit status.
        case remoteFailed
        /// A local file-system call failed.
        case fileSystem
        /// The publish failed; `underlying` says why.
        case failed
    }

    package var code: Code
    package var message: String
    /// The error this one wraps, if any (a file-system failure, a transport's error).
    package var underlying: (any Error)?
    /// Where passforge raised it: for a bug report, never printed to the user.
    package var file: String
    package var line: Int

    package var description: String { message }

    package init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        (self.code, self.message, self.underlying, self.file, self.line) = (code, message, underlying, file, line)
    }

    init(_ failure: AtomicFileSystem.Failure, file: String = #fileID, line: Int = #line) {
        self.init(.fileSystem, failure.description, underlying: failure, file: file, line: line)
    }
}
