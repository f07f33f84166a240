/// Something a server does each time a new build appears in its output tree
/// (a local `passforge build`, or one `passforge publish` carried there):
/// refresh device indices, push devices.
package protocol NewBuildReaction: Sendable {
    /// Called once per new build, in order, never concurrently, with the build's index.
    func react(to build: PublishedIndex) async
    /// Called once when the server stops.
    func shutdown() async
}

extension NewBuildReaction {
    package func shutdown() async {}
}
