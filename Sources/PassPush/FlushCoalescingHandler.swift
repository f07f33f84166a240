import NIOCore

/// Sits between the TLS handler and the HTTP/2 handler of the APNs connection
/// and defers flushes to the end of the current event-loop tick.
///
/// async-http-client flushes each request three times (HEADERS, the `{}` DATA
/// frame, the END_STREAM frame), and each flush becomes a TLS write and a
/// `writev` system call. With hundreds of pushes in flight, deferring lets the
/// frames of every stream started in the same tick leave together. Nothing is
/// held back beyond the tick, so no request can wait on it.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData

    private var flushScheduled = false
    private var removed = false

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
        if flushScheduled { context.flush() }
    }

    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            guard !handler.removed else { return }
            handler.flushScheduled = false
            context.flush()
        }
    }
}
