/// What the build's pipeline does with each item it evaluated, on the worker thread that evaluated it, while
/// that worker's next definition waits: `passforge build` signs and stages it (`ParallelPackager`), preview and
/// diff keep its render (`RenderCollector`), `validate` only looks at its diagnostics (`Validator`), and a plan
/// made to be looked at keeps its packaging job (`PlanOnly`). The planner knows no mode: each consumer says
/// what the evaluator makes for it.
protocol ItemConsumer: Sendable {
    /// What the evaluator makes of each sound item for this consumer.
    var product: PassEvaluator.Product { get }
    /// The update tag of the build that signs (an order's `updatedAt` is its time); nil when nothing is signed.
    var signingTag: Int64? { get }
    /// The name of the consumer's part of the pipeline in `--timings`.
    var partName: String { get }
    /// The state of one worker thread, used by that thread only.
    func worker(_ number: Int) -> any ItemConsumerWorker
}

protocol ItemConsumerWorker {
    /// Takes a sound item that changed (its `job` set); returns true when it consumed it (signed it: `signed` set,
    /// `job` taken), false when the job stays in the plan.
    mutating func consume(_ evaluation: inout PassEvaluator.Evaluation) -> Bool
}

/// A worker that leaves every item as the evaluator made it.
private struct KeepingWorker: ItemConsumerWorker {
    mutating func consume(_ evaluation: inout PassEvaluator.Evaluation) -> Bool { false }
}

/// `passforge validate`: every file parsed and every item checked, nothing signed or kept.
struct Validator: ItemConsumer {
    var product: PassEvaluator.Product { .diagnostics }
    var signingTag: Int64? { nil }
    var partName: String { "validate" }
    func worker(_ number: Int) -> any ItemConsumerWorker { KeepingWorker() }
}

/// Preview and diff: each sound item's render kept, as it would be signed (`UnsignedPass`), in content order.
struct RenderCollector: ItemConsumer {
    var product: PassEvaluator.Product { .render }
    var signingTag: Int64? { nil }
    var partName: String { "collect" }
    func worker(_ number: Int) -> any ItemConsumerWorker { KeepingWorker() }
}

/// A plan to look at: each item to sign kept as its packaging job (`BuildPlan.jobs`), nothing signed.
struct PlanOnly: ItemConsumer {
    var product: PassEvaluator.Product { .job }
    var signingTag: Int64? { nil }
    var partName: String { "plan" }
    func worker(_ number: Int) -> any ItemConsumerWorker { KeepingWorker() }
}

/// The build: each changed item signed and staged by the worker that evaluated it.
extension ParallelPackager: ItemConsumer {
    var product: PassEvaluator.Product { .job }
    var partName: String { "sign" }
    var signingTag: Int64? { updateTag }
    func worker(_ number: Int) -> any ItemConsumerWorker { Worker(packager: self, number: number) }
}

extension ParallelPackager.Worker: ItemConsumerWorker {
    mutating func consume(_ evaluation: inout PassEvaluator.Evaluation) -> Bool {
        guard let job = evaluation.job else { return false }
        evaluation.signed = Result { try package(job) }
        evaluation.job = nil
        return true
    }
}
