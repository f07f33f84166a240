/// Another push run holds the store's push lock.
package struct PushLockBusy: Error, CustomStringConvertible, Sendable {
    package init() {}
    package var description: String {
        "another `passforge push` is running against this registration store; wait "
            + "for it to finish (it pushes every change up to now)"
    }
}
