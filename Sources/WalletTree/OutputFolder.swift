package import ConcurrencySupport

/// The output tree of one process: its folder, every path in it (`TreeLayout`'s relative paths, placed
/// under the folder here and nowhere else), and the one writer of its device index files.
///
/// Make one per process and pass it to everything that reads or writes the tree (`passforge serve --push`
/// hands the same one to the web service, the index refresh and the push runs). The index writer skips a
/// change older than the last it wrote of the same index (`RegistrationChange.revision`); two writers of one
/// folder would each keep their own record, and the older change of one could overwrite the newer file of
/// the other (a push run's dead-token cleanup against a registration). So `DeviceIndexFiles` is made here
/// only.
package final class OutputFolder: Sendable {
    /// The folder, as the command line spells it (`ProjectRoot`).
    package let directory: String
    /// The one writer of `v1/devices/…` in this process.
    package let indexFiles: DeviceIndexFiles

    /// `pool`: the process's one `BlockingPool`, for the blocking file work of the tree (the index writer, the
    /// server's reads); the default is a pool of the tree's own until every command passes its pool.
    package init(directory: String, pool: BlockingPool = BlockingPool(threadCount: 4)) {
        self.directory = directory
        indexFiles = DeviceIndexFiles(outputDirectory: directory, pool: pool)
    }

    /// The threads of the tree's blocking file work.
    package var pool: BlockingPool { indexFiles.pool }

    /// `relative` (a path of `TreeLayout`) in this folder.
    package func path(_ relative: some StringProtocol) -> String { "\(directory)/\(relative)" }

    /// `.passforge/`: the build's own files.
    package var stateFolder: String { path(TreeLayout.stateFolder) }
    /// `.passforge/state.json`: what the last build made.
    package var statePath: String { path(TreeLayout.statePath) }
    /// `.passforge/downloads.csv`: every add-to-Wallet link, for mailings.
    package var downloadsListPath: String { path(TreeLayout.downloadsListPath) }
}
