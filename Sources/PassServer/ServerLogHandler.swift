import Foundation
package import Logging
import Synchronization

/// One line per entry on standard error: `time level label: message key=value…`.
///
/// Like swift-log's StreamLogHandler, but metadata is formatted only when
/// an entry is written: Hummingbird attaches a request id to every
/// request's logger, and formatting it eagerly costs more than a 304 does.
package struct ServerLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String

    package init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line = "\(Self.timestamp()) \(event.level) \(label): \(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        line += "\n"
        Self.standardError.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Held while a line is written, so lines of concurrent requests never interleave.
    private static let standardError = Mutex(())

    private static func timestamp() -> String {
        let now = Date().timeIntervalSince1970
        var seconds = time_t(now.rounded(.down))
        let milliseconds = Int((now - now.rounded(.down)) * 1000)
        var time = tm()
        gmtime_r(&seconds, &time)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", time.tm_year + 1900, time.tm_mon + 1, time.tm_mday,
            time.tm_hour, time.tm_min, time.tm_sec, milliseconds)
    }
}
