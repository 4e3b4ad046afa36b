import CCurl
import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// What a transfer tells after (or while) it runs: status, times, its connection.
extension EasyHandle {

    /// The text in the error buffer after a failure.
    var errorText: String {
        errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The HTTP status of the last response. - SeeAlso: `CURLINFO_RESPONSE_CODE`.
    public var responseCode: Int {
        var code = 0
        sluice_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Seconds from start to the first response byte. - SeeAlso: `CURLINFO_STARTTRANSFER_TIME_T`.
    public var timeToFirstByte: Double { microseconds(CURLINFO_STARTTRANSFER_TIME_T) }

    /// Seconds for the whole transfer. - SeeAlso: `CURLINFO_TOTAL_TIME_T`.
    public var totalTime: Double { microseconds(CURLINFO_TOTAL_TIME_T) }

    /// The phases of the last transfer, each in seconds from its start (curl's cumulative times):
    /// name resolved, TCP connected, TLS done (0 for http), request sent, first byte, complete.
    public struct Timings: Sendable, Equatable {
        public var nameLookup = 0.0
        public var connect = 0.0
        public var tls = 0.0
        public var preTransfer = 0.0
        public var firstByte = 0.0
        public var total = 0.0
        public init() {}
    }

    /// - SeeAlso: `CURLINFO_NAMELOOKUP_TIME_T`, `CURLINFO_CONNECT_TIME_T`, `CURLINFO_APPCONNECT_TIME_T`,
    ///   `CURLINFO_PRETRANSFER_TIME_T`, `CURLINFO_STARTTRANSFER_TIME_T`, `CURLINFO_TOTAL_TIME_T`.
    public var timings: Timings {
        var timings = Timings()
        timings.nameLookup = microseconds(CURLINFO_NAMELOOKUP_TIME_T)
        timings.connect = microseconds(CURLINFO_CONNECT_TIME_T)
        timings.tls = microseconds(CURLINFO_APPCONNECT_TIME_T)
        timings.preTransfer = microseconds(CURLINFO_PRETRANSFER_TIME_T)
        timings.firstByte = microseconds(CURLINFO_STARTTRANSFER_TIME_T)
        timings.total = microseconds(CURLINFO_TOTAL_TIME_T)
        return timings
    }

    /// Number of new connections this transfer opened (0 = reused). - SeeAlso: `CURLINFO_NUM_CONNECTS`.
    public var newConnections: Int {
        var count = 0
        sluice_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &count)
        return count
    }

    /// After a body's last byte: when bytes already wait on the transfer's connection, it is cut
    /// (`shutdown`, both ways) so that libcurl cannot hand it to another request, whose answer
    /// those bytes would become. libcurl reads no further than a body's length, and 7.88 reuses
    /// a connection with bytes waiting. One peek (`MSG_PEEK`); `true` when it cut. For plain
    /// connections: over TLS, bytes waiting may be the origin's session tickets.
    @discardableResult
    public func retireConnectionIfInputWaits() -> Bool {
        let fd = transferSocket
        // The end libcurl sees itself; nothing waiting is the usual case.
        guard fd >= 0, Connection.waitingInput(on: fd) == .bytes else { return false }
        shutdown(fd, Int32(SHUT_RDWR))
        return true
    }

    /// Whether the last response came over HTTP/1.x (not HTTP/2, whose frames may arrive on an
    /// idle connection at any time). - SeeAlso: `CURLINFO_HTTP_VERSION`.
    var answeredOverHTTP1: Bool {
        var version = 0
        sluice_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        return version == Int(CURL_HTTP_VERSION_1_0) || version == Int(CURL_HTTP_VERSION_1_1)
    }

    /// The address of the connected peer. - SeeAlso: `CURLINFO_PRIMARY_IP`.
    public var primaryIP: String {
        var text: UnsafeMutablePointer<CChar>?
        sluice_easy_getinfo_string(handle, CURLINFO_PRIMARY_IP, &text)
        return text.map { String(cString: $0) } ?? ""
    }

    func microseconds(_ info: CURLINFO) -> Double {
        var value: curl_off_t = 0
        sluice_easy_getinfo_off(handle, info, &value)
        return Double(value) / 1_000_000
    }
}
