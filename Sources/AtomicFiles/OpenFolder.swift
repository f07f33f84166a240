import CSystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// A folder held open, whose files are made, moved and linked by name relative to it: the
/// kernel then looks up one name, not every folder of a long path. A build stages three names
/// for each of thousands of passes, each path some ten folders deep.
package final class OpenFolder: Sendable {
    /// The folder's path, for messages.
    package let path: String
    private let descriptor: Int32

    /// Opens the folder at `path`, which must exist.
    package init(_ path: String) throws(AtomicFileSystem.Failure) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AtomicFileSystem.Failure(path: path, operation: "open the folder", code: errno)
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Whether the folder is on tmpfs, where making a file only takes memory. On a disk file system
    /// (ext4 and others) the kernel finds a free inode while it holds the folder's lock, which after
    /// mass deletions can take longer than signing a pass, and other threads making files in the same
    /// folder spin on that lock meanwhile.
    package var isInMemory: Bool { passforge_is_tmpfs(descriptor) == 1 }

    /// `AtomicFileSystem.createFile` of `name` in this folder: a new file (never one already
    /// there), dated `milliseconds` since 1970, not flushed.
    package func createFile(_ bytes: [UInt8], named name: String, modifiedAt milliseconds: Int64)
        throws(AtomicFileSystem.Failure)
    {
        try AtomicFileSystem.createFile(
            bytes, at: name, in: descriptor, shownAs: "\(path)/\(name)", modifiedAt: milliseconds)
    }

    /// Renames `name` to `newName` in `folder` (on the same file system), replacing what is there.
    package func moveFile(named name: String, to folder: OpenFolder, as newName: String) throws(AtomicFileSystem
        .Failure)
    {
        guard renameat(descriptor, name, folder.descriptor, newName) == 0 else {
            throw AtomicFileSystem.Failure(
                path: "\(folder.path)/\(newName)", operation: "rename \(path)/\(name) to", code: errno)
        }
    }

    /// Makes `newName` in `folder` another name of the file `name` (a hard link); `newName` must be new.
    package func linkFile(named name: String, to folder: OpenFolder, as newName: String) throws(AtomicFileSystem
        .Failure)
    {
        guard linkat(descriptor, name, folder.descriptor, newName, 0) == 0 else {
            throw AtomicFileSystem.Failure(
                path: "\(folder.path)/\(newName)", operation: "link \(path)/\(name) as", code: errno)
        }
    }
}
