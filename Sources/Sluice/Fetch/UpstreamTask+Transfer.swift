import Curl

extension UpstreamTask {
    /// One libcurl transfer of the task (the first request, or one after a followed redirect).
    /// A class: the phases hold it by reference, so reading a header line never copies the
    /// section read so far, and a phase change moves one pointer.
    final class Transfer {
        /// The handle, checked out of the session's pool for this transfer.
        let handle: EasyHandle
        /// The header sections as they arrive.
        var head: ResponseHeadParser
        /// When it started (monotonic nanoseconds), for ``UpstreamTask/timeToHead``.
        let startTime: UInt64

        init(handle: EasyHandle, head: ResponseHeadParser, startTime: UInt64) {
            self.handle = handle
            self.head = head
            self.startTime = startTime
        }
    }
}
