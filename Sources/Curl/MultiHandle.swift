import CCurl
import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// Hears when transfers finish.
public protocol MultiHandleDelegate: AnyObject {
    /// `handle` finished; `error` is `nil` on success. The handle is already removed from the multi handle.
    func multiHandle(_ multi: MultiHandle, didComplete handle: EasyHandle, error: CurlError?)
}

/// A libcurl multi handle driven by an ``EventLoop`` (the multi-socket interface, "hiperfifo" shape):
/// curl says which sockets to watch and when to wake it; the loop reports readiness back.
/// Connections are pooled here and reused across transfers.
/// - SeeAlso: `curl_multi_socket_action(3)`, `CURLMOPT_SOCKETFUNCTION`, `CURLMOPT_TIMERFUNCTION`.
///
/// libcurl 7.88 does not watch the connections idle in its pool: bytes an origin sends on one
/// after its answer ended would be read as the answer to the next request that reuses it. So a
/// socket libcurl stops watching after an HTTP/1.x answer is watched here for input until libcurl
/// uses it again or closes it; input (stray bytes, a close) cuts it (`shutdown`), and libcurl's
/// check before reuse then finds it dead. Sockets close through ``SocketCloser`` (libcurl's
/// `CURLOPT_CLOSESOCKETFUNCTION`), so that no watch outlives its socket, whose number the next
/// socket may get at once.
public final class MultiHandle {
    let multi: UnsafeMutableRawPointer
    private let loop: EventLoop
    private var watchers: [Int32: SocketWatcher] = [:]
    /// Sockets of connections idle in libcurl's pool, watched for input (a subset of ``watchers``' keys).
    private var idle: Set<Int32> = []
    /// Closes the sockets of this handle's connections; outlives `curl_multi_cleanup`.
    private let closer = SocketCloser()
    private var timer: Timer!
    /// Receives completions; not retained.
    public weak var delegate: (any MultiHandleDelegate)?
    private var dispatching = 0
    private var deferredRemovals: [EasyHandle] = []
    private var running: Int32 = 0

    /// Creates a multi handle on `loop`.
    /// - Parameters:
    ///   - maxConnections: idle connections kept for reuse (`CURLMOPT_MAXCONNECTS`); 256 by default.
    ///   - maxConnectionsPerHost: 0 = unlimited (`CURLMOPT_MAX_HOST_CONNECTIONS`); 0 by default.
    public init(loop: EventLoop, maxConnections: Int = 256, maxConnectionsPerHost: Int = 0) {
        Curl.initialise()
        self.loop = loop
        multi = curl_multi_init()!
        timer = Timer(loop: loop) { [unowned self] in self.act(socket: CURL_SOCKET_TIMEOUT, flags: 0) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        sluice_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        sluice_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
        sluice_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnections)
        sluice_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        sluice_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        closer.multi = self
        sluice_multi_setopt_socket_cb(multi, CURLMOPT_SOCKETFUNCTION) { easy, socket, what, context, _ in
            var owner: EasyHandle?
            if let easy {
                var pointer: UnsafeMutableRawPointer?
                sluice_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
                owner = pointer.map { Unmanaged<EasyHandle>.fromOpaque($0).takeUnretainedValue() }
            }
            Unmanaged<MultiHandle>.fromOpaque(context!).takeUnretainedValue().watch(
                socket: socket, what: what, for: owner)
            // Which socket the transfer uses now (CURLINFO_ACTIVESOCKET answers only for
            // CURLOPT_CONNECT_ONLY transfers).
            if what != CURL_POLL_REMOVE, let owner { owner.transferSocket = socket }
            return 0
        }
        sluice_multi_setopt_timer_cb(multi, CURLMOPT_TIMERFUNCTION) { _, milliseconds, context in
            let owner = Unmanaged<MultiHandle>.fromOpaque(context!).takeUnretainedValue()
            if milliseconds < 0 {
                owner.timer.cancel()
            } else if milliseconds == 0 && owner.dispatching == 0 {
                // A transfer was added (or removed) outside curl: run it in this loop turn, after the
                // other callbacks already due (so requests read together still start together),
                // instead of polling once more first.
                owner.timer.fireSoon()
            } else {
                // Inside curl, "now" waits for the next turn, so that sockets are polled in between.
                owner.timer.schedule(milliseconds: milliseconds)
            }
            return 0
        }
    }

    deinit {
        for watcher in watchers.values { watcher.cancel() }
        watchers = [:]
        idle = []
        curl_multi_cleanup(multi)  // closes the pooled connections through `closer`
    }

    /// Transfers in progress.
    public private(set) var activeCount = 0

    /// Starts a transfer. - SeeAlso: `curl_multi_add_handle(3)`.
    public func add(_ handle: EasyHandle) throws(CurlError) {
        handle.transferSocket = -1  // told by the socket callback once the transfer has one
        if handle.closer !== closer {
            // The connections the handle opens keep these (libcurl copies them at connect).
            handle.closer = closer
            sluice_easy_setopt_pointer(
                handle.handle, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(closer).toOpaque())
            sluice_easy_setopt_closesocket_cb(handle.handle, CURLOPT_CLOSESOCKETFUNCTION) { context, socket in
                Unmanaged<SocketCloser>.fromOpaque(context!).takeUnretainedValue().closeSocket(socket)
            }
        }
        let result = curl_multi_add_handle(multi, handle.handle)
        guard result == CURLM_OK else { throw CurlError(multiCode: result) }
        handle.isActive = true
        activeCount += 1
    }

    /// Stops a transfer without a completion callback; safe inside callbacks (then deferred).
    public func remove(_ handle: EasyHandle) {
        guard handle.isActive else { return }
        if dispatching > 0 {
            deferredRemovals.append(handle)
            return
        }
        detach(handle)
    }

    private func detach(_ handle: EasyHandle) {
        guard handle.isActive else { return }
        handle.isActive = false
        activeCount -= 1
        curl_multi_remove_handle(multi, handle.handle)
    }

    // MARK: - Driving

    private func watch(socket: curl_socket_t, what: Int32, for owner: EasyHandle?) {
        if what == CURL_POLL_REMOVE {
            // A transfer that ended after an HTTP/1.x answer leaves its connection idle in the
            // pool (or about to close: ``forget(socket:)`` follows). A paused transfer still owns
            // its socket; HTTP/2 frames (a PING) may arrive on an idle connection at any time.
            if let owner, !owner.isPaused, owner.answeredOverHTTP1, closer.isOpen(socket),
                let watcher = watchers[socket]
            {
                idle.insert(socket)
                watcher.watch(.read)
            } else {
                forget(socket: socket)
            }
            return
        }
        idle.remove(socket)
        var interest: SocketWatcher.Interest = []
        if what & CURL_POLL_IN != 0 { interest.insert(.read) }
        if what & CURL_POLL_OUT != 0 { interest.insert(.write) }
        let watcher =
            watchers[socket]
            ?? {
                let created = SocketWatcher(loop: loop, fd: socket) { [unowned self] fd, ready in
                    if self.idle.contains(fd) { return self.cut(idle: fd) }
                    var flags: Int32 = 0
                    if ready.contains(.read) { flags |= CURL_CSELECT_IN }
                    if ready.contains(.write) { flags |= CURL_CSELECT_OUT }
                    self.act(socket: fd, flags: flags)
                }
                watchers[socket] = created
                return created
            }()
        watcher.watch(interest)
    }

    /// Input on an idle connection (stray bytes, a close): cut both ways, so libcurl's check
    /// before its next use finds it dead and closes it.
    private func cut(idle socket: curl_socket_t) {
        forget(socket: socket)
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Stops watching a socket (libcurl is about to close it, or no longer needs it watched).
    fileprivate func forget(socket: curl_socket_t) {
        idle.remove(socket)
        watchers.removeValue(forKey: socket)?.cancel()
    }

    private func act(socket: curl_socket_t, flags: Int32) {
        dispatching += 1
        curl_multi_socket_action(multi, socket, flags, &running)
        dispatching -= 1
        drainCompletions()
    }

    private func drainCompletions() {
        guard dispatching == 0 else { return }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            sluice_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context)
            guard let context else { continue }
            let handle = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
            let error = code == CURLE_OK ? nil : CurlError(code: code, detail: handle.errorText)
            detach(handle)
            delegate?.multiHandle(self, didComplete: handle, error: error)
        }
        while !deferredRemovals.isEmpty {
            let pending = deferredRemovals
            deferredRemovals.removeAll()
            for handle in pending { detach(handle) }
        }
    }
}

/// Closes the sockets libcurl opened for a ``MultiHandle``'s transfers (libcurl's
/// `CURLOPT_CLOSESOCKETFUNCTION`), after the multi handle forgot any watch on them. Held by the
/// multi handle, which it does not keep alive: during `curl_multi_cleanup` it only closes.
final class SocketCloser {
    weak var multi: MultiHandle?
    /// The sockets opened for transfers (`CURLOPT_OPENSOCKETFUNCTION`) and not closed yet: the
    /// only ones that close here, so the only ones an idle watch may be kept on (libcurl's
    /// resolver has sockets of its own, closed without telling).
    private var open: Set<Int32> = []

    func opened(_ socket: curl_socket_t) { open.insert(socket) }

    func isOpen(_ socket: curl_socket_t) -> Bool { open.contains(socket) }

    func closeSocket(_ socket: curl_socket_t) -> Int32 {
        open.remove(socket)
        multi?.forget(socket: socket)
        return close(socket)
    }
}
