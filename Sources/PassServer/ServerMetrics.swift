package import Foundation
import Metrics
package import Prometheus
package import RegistrationStore
import Synchronization

/// What `GET /metrics` reports, in Prometheus' text format: requests by
/// route, method and status with their latency, the registration store's
/// counts, the push queue, and the build being served. Recorded through
/// swift-metrics into a registry of this server alone (no process-wide
/// bootstrap), exported by swift-prometheus.
package final class ServerMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// The server's connection cap, whose open connections a scrape reports; nil without one.
    private let connectionLimit = Mutex<ConnectionLimit?>(nil)

    package init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Registrations take a few milliseconds (a durable write), 304s well under one.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
            .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1),
            .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// One answered request; `route` is `Route.name` (never a parameter) or `unmatched`.
    package func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        Counter(
            label: "passforge_http_requests_total",
            dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory
        ).increment()
        Metrics.Timer(
            label: "passforge_http_request_duration_seconds", dimensions: [("route", route), ("method", method)],
            factory: factory
        )
        .recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The outcome of a registration change (`created`, `pushTokenReplaced`, `unchanged`, `removed`, `notRegistered`).
    package func recordRegistrationChange(_ outcome: RegistrationOutcome) {
        Counter(
            label: "passforge_registration_changes_total", dimensions: [("outcome", "\(outcome)")], factory: factory
        ).increment()
    }

    /// Device log messages received, and those the log budget kept out of the server's log.
    package func recordDeviceLog(received: Int, suppressed: Int) {
        Counter(label: "passforge_device_log_messages_total", factory: factory).increment(by: received)
        if suppressed > 0 {
            Counter(label: "passforge_device_log_messages_suppressed_total", factory: factory).increment(by: suppressed)
        }
    }

    /// One push run's answers from APNs: `accepted` (200), `unregistered`
    /// (410, or 400 BadDeviceToken: the token was removed), `retried` (429,
    /// 5xx, a lost connection: sent again with backoff) and `pending` (not
    /// delivered in this run, left for the next).
    package func recordPushes(accepted: Int, unregistered: Int, retried: Int, pending: Int) {
        for (answer, count) in [
            ("accepted", accepted), ("unregistered", unregistered), ("retried", retried), ("pending", pending),
        ] {
            // Every answer is reported, 0 included, so an alert on a rate sees the series from the first run.
            Counter(label: "passforge_pushes_total", dimensions: [("answer", answer)], factory: factory).increment(
                by: count)
        }
    }

    /// The connection cap whose count of open connections each scrape reports.
    func observe(_ limit: ConnectionLimit) {
        connectionLimit.withLock { $0 = limit }
    }

    /// What the connection cap did for one new connection: `closed` an idle or half-sent one to take it,
    /// or `refused` it (503) because every open one was being answered.
    func recordConnectionAtCap(_ action: String) {
        Counter(label: "passforge_connections_at_cap_total", dimensions: [("action", action)], factory: factory)
            .increment()
    }

    /// One answered offer claim (`created`, `repeated`, `alreadyClaimed`, `exhausted`, `badRequest`, `unavailable`);
    /// `offer` is a configured offer's name, or `unknown` (never a name a client made up).
    package func recordClaim(offer: String, outcome: String) {
        Counter(
            label: "passforge_offer_claims_total", dimensions: [("offer", offer), ("outcome", outcome)],
            factory: factory
        ).increment()
    }

    /// The Prometheus text: the counters so far, and gauges read now from the store and the tree.
    package func exposition(store: any RegistrationStore, tree: PublishedTree.Snapshot, now: Date = Date()) async
        -> [UInt8]
    {
        gauge("passforge_build_update_tag", Double(tree.lastUpdateTag))
        gauge("passforge_passes", Double(tree.passCount))
        gauge("passforge_orders", Double(tree.orderCount))
        if let limit = connectionLimit.withLock({ $0 }) {
            gauge("passforge_connections_open", Double(limit.openCount))
            gauge("passforge_connection_cap", Double(limit.maximum))
        }
        if let statistics = try? await store.statistics() {
            gauge("passforge_devices", Double(statistics.devices))
            gauge("passforge_registrations", Double(statistics.registrations))
            gauge("passforge_store_up", 1)
        } else {
            gauge("passforge_store_up", 0)
        }
        if let queue = store as? any PushQueue, let pushes = try? await queue.pushQueueStatistics() {
            gauge("passforge_push_queue_depth", Double(pushes.pending))
            gauge(
                "passforge_push_oldest_pending_age_seconds",
                pushes.oldestQueuedAt.map { max(0, now.timeIntervalSince1970 - $0) } ?? 0)
        }
        if let offers = store as? any OfferClaimStore, let pools = try? await offers.offerStatistics() {
            for pool in pools {
                Gauge(label: "passforge_offer_passes_left", dimensions: [("offer", pool.offer)], factory: factory)
                    .record(Double(pool.left))
                Gauge(label: "passforge_offer_pool_size", dimensions: [("offer", pool.offer)], factory: factory).record(
                    Double(pool.poolSize))
            }
        }
        await recordInstalls(store: store, tree: tree)
        return registry.emitToBuffer()
    }

    /// A gauge with labels (the install counts of `recordInstalls`).
    func gauge(_ name: String, _ dimensions: [(String, String)], _ value: Double) {
        Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
    }

    private func gauge(_ name: String, _ value: Double) {
        Gauge(label: name, factory: factory).record(value)
    }
}
