import AtomicFiles
import ConcurrencySupport
import Foundation
package import Logging
import PassModel
package import RegistrationStore
package import WalletTree

/// One push run (`passforge push`, `build --push`, `serve --push`): tells the
/// devices holding passes changed since the last run to fetch them. Apple's
/// "Adding a Web Service to Update Passes": one notification per push token
/// and pass type tells the device to ask for every changed pass of that type.
///
/// What makes it safe to kill and to run twice:
/// 1. Under the store's push lock, the changes since the push cursor become
///    pending pushes — one per (push token, pass type), merged with those
///    still pending — and the cursor moves to the build's last tag, in one
///    transaction. No change can be skipped, none is queued twice.
/// 2. The pending pushes are sent; a push leaves the queue only once APNs
///    accepted it (or said its token is dead). What fails, or what a killed
///    run never sent, is still pending for the next run.
package struct PushRun: Sendable {
    package struct Options: Sendable {
        /// Print what would be sent; change nothing.
        package var dryRun = false
        /// Push this one pass now, whatever the cursor says (`--type`/`--serial`).
        package var pass: PassReference?

        package init(dryRun: Bool = false, pass: PassReference? = nil) {
            self.dryRun = dryRun
            self.pass = pass
        }
    }

    package struct Report: Sendable {
        /// The passes and orders whose changes this run queued.
        package var changed = ChangedItems()
        /// Pushes pending when sending began (queued now or left by an earlier run).
        package var pending = 0
        /// Counts over every topic.
        package var summary = PushSummary()
        /// Devices deleted because APNs said their token is dead.
        package var removedDevices = 0
        /// Per-topic problems (no usable certificate, APNs refused the run…).
        package var failures: [String] = []
        /// `--dry-run`: the pushes that would be sent.
        package var plannedPushes: [PushNotification] = []

        package var succeeded: Bool { failures.isEmpty && summary.stopReason == nil && summary.leftPending == 0 }

        /// The one line every push reports, in the terminal and in the server's log.
        package var summaryLine: String {
            "sent \(summary.sent), succeeded \(summary.succeeded), removed tokens \(summary.tokensInvalid) "
                + "(\(removedDevices) device\(removedDevices == 1 ? "" : "s")), retried \(summary.retries), "
                + "failed \(summary.leftPending) (left pending for the next run)"
        }
    }

    package enum Progress: Sendable {
        case queued(changed: ChangedItems, pending: Int)
        case sending(topic: String, pushes: Int)
        case sent(done: Int, total: Int)
    }

    package let store: any PushQueue
    /// The process's output tree: the state is read from it, and a dead token's index files are removed
    /// through its one index writer, which the web service of `serve --push` writes through too.
    package let output: OutputFolder
    package let senders: any PushSenderProvider
    package let logger: Logger
    /// Deliveries recorded in the store at once; a killed run re-sends at most
    /// these (APNs accepted them, the store had not heard yet).
    package var completionBatch = 64
    package var completionInterval: Duration = .milliseconds(50)
    /// Passes queued per transaction (see `queue`): ten devices each in the million-device benchmark.
    package var queueChunk = 5_000

    package init(
        store: any PushQueue, output: OutputFolder, senders: any PushSenderProvider,
        logger: Logger = Logger(label: "passforge.push")
    ) {
        self.store = store
        self.output = output
        self.senders = senders
        self.logger = logger
    }

    /// `index`: the build's index when the caller has it (a build that just committed it, a server that
    /// took a new build); read from the output folder when nil.
    package func run(
        _ options: Options = Options(), index: PublishedIndex? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> Report {
        let state = try index ?? PublishedIndex.load(from: output.directory)
        if options.dryRun { return try await plan(state: state, options: options) }
        return try await store.withPushLock {
            var report = Report()
            report.changed = ChangedItems(try await queue(state: state, options: options), in: state)
            let pending = try await store.pendingPushes(limit: Int.max)
            report.pending = pending.count
            progress(.queued(changed: report.changed, pending: pending.count))
            let byTopic = Dictionary(grouping: pending, by: \.passTypeIdentifier)
            for topic in byTopic.keys.sorted() {
                let pushes = byTopic[topic]!
                do {
                    let sender = try await senders.sender(topic: topic, index: state)
                    progress(.sending(topic: topic, pushes: pushes.count))
                    let (summary, removed) = try await send(
                        pushes, topic: topic, with: sender, state: state, progress: progress)
                    report.summary.add(summary)
                    report.removedDevices += removed
                    if summary.stopReason != nil { break }
                } catch {
                    report.failures.append("\(topic): \(error)")
                    report.summary.leftPending += pushes.count
                }
            }
            return report
        }
    }

    // MARK: Steps

    /// Moves the changes since the cursor (or the one pass asked for) into the queue.
    private func queue(state: PublishedIndex, options: Options) async throws -> [PassReference] {
        if let pass = options.pass {
            guard state.item(type: pass.passTypeIdentifier, identifier: pass.serialNumber) != nil else {
                throw PushRunError.unknownPass(pass)
            }
            // By hand: queue this pass, leave the cursor where it is.
            try await store.queuePushes(for: [pass], advancingCursorTo: try await store.pushCursor() ?? .min)
            return [pass]
        }
        let changed = try await changedPasses(state: state)
        // In chunks, each its own transaction, so one transaction never holds a million rows (at 1,000,000
        // devices the single INSERT outlived PostgreSQL's 10 s query deadline). Only the last chunk advances
        // the cursor: a run stopped before it leaves the cursor where it was, and the next run queues the
        // same passes again (the queue merges repeats), so nothing is skipped.
        let kept = try await store.pushCursor() ?? .min
        var start = changed.startIndex
        repeat {
            let end = min(start + max(1, queueChunk), changed.endIndex)
            let cursor = end == changed.endIndex ? state.lastUpdateTag : kept
            try await store.queuePushes(for: Array(changed[start..<end]), advancingCursorTo: cursor)
            start = end
        } while start < changed.endIndex
        return changed
    }

    private func changedPasses(state: PublishedIndex) async throws -> [PassReference] {
        // No cursor: nothing was ever pushed from this store, so every pass counts as changed.
        let cursor = try await store.pushCursor() ?? .min
        // Removed passes count too: their holders learn from the serials list
        // that the pass is gone.
        let changed = state.items.values.filter { $0.updateTag > cursor }
            .map { PassReference(passTypeIdentifier: $0.typeIdentifier, serialNumber: $0.identifier) }
        let removed = state.removedItems.values.filter { $0.removedTag > cursor }
            .map { PassReference(passTypeIdentifier: $0.key.typeIdentifier, serialNumber: $0.key.identifier) }
        return (changed + removed)
            .sorted { ($0.passTypeIdentifier, $0.serialNumber) < ($1.passTypeIdentifier, $1.serialNumber) }
    }

    /// `--dry-run`: what is pending plus what the changes would add, nothing written.
    private func plan(state: PublishedIndex, options: Options) async throws -> Report {
        var report = Report()
        let changed: [PassReference]
        if let pass = options.pass {
            guard state.item(type: pass.passTypeIdentifier, identifier: pass.serialNumber) != nil else {
                throw PushRunError.unknownPass(pass)
            }
            changed = [pass]
        } else {
            changed = try await changedPasses(state: state)
        }
        report.changed = ChangedItems(changed, in: state)
        var planned = Set(
            try await store.pendingPushes(limit: Int.max).map {
                PushNotification(token: $0.pushToken, topic: $0.passTypeIdentifier)
            })
        for (topic, passes) in Dictionary(grouping: changed, by: \.passTypeIdentifier) {
            for token in try await store.pushTokens(
                passTypeIdentifier: topic, serialNumbers: passes.map(\.serialNumber))
            {
                planned.insert(PushNotification(token: token, topic: topic))
            }
        }
        report.plannedPushes = planned.sorted { ($0.topic, $0.token) < ($1.topic, $1.token) }
        report.pending = planned.count
        return report
    }

    /// Sends one topic's pushes and records each outcome in the store.
    private func send(
        _ pushes: [PendingPush], topic: String, with sender: PushSender, state: PublishedIndex,
        progress: @escaping @Sendable (Progress) -> Void
    ) async throws -> (PushSummary, removedDevices: Int) {
        let recorder = OutcomeRecorder(
            store: store, indexFiles: output.indexFiles, state: state,
            pending: pushes, batch: completionBatch, logger: logger)
        let total = pushes.count
        // Deliveries reach the store within `completionInterval` even when no further answer arrives.
        let interval = completionInterval
        // Stopped by `finish()`, not by cancellation: a cancelled task's store
        // write is abandoned, and the deliveries it carried would be sent again.
        let flusher = Task {
            while await !recorder.isFinished {
                try? await Task.sleep(for: interval)
                try? await recorder.flush()
            }
        }
        let summary = await sender.send(pushes.map { PushNotification(token: $0.pushToken, topic: topic) }) { outcome in
            await recorder.record(outcome)
            let done = await recorder.recorded
            if done == total || done % 1000 == 0 { progress(.sent(done: done, total: total)) }
        }
        await recorder.finish()
        await flusher.value
        try await recorder.flush()
        if let failure = await recorder.failure { throw failure }
        return (summary, await recorder.removedDevices)
    }
}

/// Gives the run a sender for each topic (pass type): in production an
/// APNs client with that Pass Type ID's certificate.
package protocol PushSenderProvider: Sendable {
    /// Throws a message for people when the topic cannot be pushed (no
    /// certificate, a certificate for another pass type…); its pushes stay pending.
    func sender(topic: String, index: PublishedIndex) async throws -> PushSender
    func shutdown() async
}

package enum PushRunError: Error, CustomStringConvertible, Sendable {
    case unknownPass(PassReference)
    /// A topic cannot be pushed with the configured certificate (none, the development chain, one for
    /// another type, an expired one); its pushes stay pending.
    case unusableIdentity(String)

    package var description: String {
        switch self {
        case .unusableIdentity(let reason):
            return reason
        case .unknownPass(let pass):
            return
                "there is no pass or order \(pass.passTypeIdentifier)/\(pass.serialNumber) in the last build; check --type and --serial (an order type identifier and orderIdentifier for an order), or build first"
        }
    }
}

extension PushSummary {
    mutating func add(_ other: PushSummary) {
        sent += other.sent
        succeeded += other.succeeded
        tokensInvalid += other.tokensInvalid
        retries += other.retries
        leftPending += other.leftPending
        stopReason = stopReason ?? other.stopReason
    }
}

/// Writes outcomes to the store as they come: deliveries in small batches,
/// dead tokens at once (their devices deleted and index files rewritten).
actor OutcomeRecorder {
    let store: any PushQueue
    let indexFiles: DeviceIndexFiles
    let state: PublishedIndex
    let batch: Int
    let logger: Logger
    private let pendingByToken: [String: PendingPush]
    private var completed: [PendingPush] = []
    private(set) var recorded = 0
    private(set) var removedDevices = 0
    private(set) var failure: (any Error)?

    init(
        store: any PushQueue, indexFiles: DeviceIndexFiles, state: PublishedIndex, pending: [PendingPush],
        batch: Int, logger: Logger
    ) {
        self.store = store
        self.indexFiles = indexFiles
        self.state = state
        self.batch = max(1, batch)
        self.logger = logger
        pendingByToken = Dictionary(pending.map { ($0.pushToken, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func record(_ outcome: PushOutcome) async {
        recorded += 1
        guard let push = pendingByToken[outcome.notification.token] else { return }
        do {
            switch outcome.result {
            case .delivered:
                completed.append(push)
                if completed.count >= batch { try await flush() }
            case .tokenInvalid(let since, _):
                // APNs: 410 Unregistered or 400 BadDeviceToken. Delete what registered
                // with this token before it died (Apple's "Handling notification
                // responses from APNs": 410 carries the time the token stopped being valid).
                let changes = try await store.deleteDevices(
                    pushToken: push.pushToken, invalidSince: since?.timeIntervalSince1970)
                removedDevices += Set(changes.map(\.index.device)).count
                if !changes.isEmpty {
                    let indexFiles = self.indexFiles
                    let state = self.state
                    try await indexFiles.applyAll(changes.map { ($0, state) })
                }
                completed.append(push)
                try await flush()
            case .leftPending:
                break
            }
        } catch {
            // The store is unreachable: stop recording; what was not recorded stays pending.
            if failure == nil {
                failure = error
                logger.error("cannot record push outcomes in the registration store: \(error)")
            }
        }
    }

    private(set) var isFinished = false

    func finish() { isFinished = true }

    func flush() async throws {
        guard !completed.isEmpty, failure == nil else { return }
        let done = completed
        completed.removeAll(keepingCapacity: true)
        do {
            try await store.completePushes(done)
        } catch {
            // Kept for the next flush; if none succeeds they stay pending and are sent again.
            completed.append(contentsOf: done)
            throw error
        }
    }
}

/// How many passes and orders changed since the last push: what `push` reports.
package struct ChangedItems: Sendable, Equatable, CustomStringConvertible {
    package var passes = 0
    package var orders = 0

    package init(passes: Int = 0, orders: Int = 0) {
        (self.passes, self.orders) = (passes, orders)
    }

    /// Counts `items` by the kind the index gives each one's type (a removed item's too).
    init(_ items: [PassReference], in index: PublishedIndex) {
        for item in items {
            let kind = index.kind(ofType: item.passTypeIdentifier) ?? .pass
            if kind == .order { orders += 1 } else { passes += 1 }
        }
    }

    /// "3 changed passes", or "3 changed passes and 1 changed order" once there are orders.
    package var description: String {
        let passText = "\(passes) changed pass\(passes == 1 ? "" : "es")"
        return orders == 0 ? passText : "\(passText) and \(orders) changed order\(orders == 1 ? "" : "s")"
    }
}
