import NIOHTTP2

enum HTTP2GoAway {
    static func frame(lastStreamID: Int) -> HTTP2Frame {
        HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: nil)
        )
    }
}
