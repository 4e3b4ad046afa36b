import CCurl
import EventIO

/// Hears when transfers finish.
public protocol MultiHandleDelegate: AnyObject {
    /// `handle` finished; `error` is `nil` on success. The handle is already removed from the multi handle.
    func multiHandle(_ multi: MultiHandle, didComplete handle: EasyHandle, error: CurlError?)
}

/// A libcurl multi handle driven by an ``EventLoop`` (the multi-socket interface, "hiperfifo" shape):
/// curl says which sockets to watch and when to wake it; the loop reports readiness back.
/// Connections are pooled here and reused across transfers.
/// - SeeAlso: `curl_multi_socket_action(3)`, `CURLMOPT_SOCKETFUNCTION`, `CURLMOPT_TIMERFUNCTION`.
public final class MultiHandle {
    let multi: UnsafeMutableRawPointer
    private let loop: EventLoop
    private var watchers: [Int32: SocketWatcher] = [:]
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
        sluice_multi_setopt_socket_cb(multi, CURLMOPT_SOCKETFUNCTION) { easy, socket, what, context, _ in
            Unmanaged<MultiHandle>.fromOpaque(context!).takeUnretainedValue().watch(socket: socket, what: what)
            // Which socket the transfer uses now (CURLINFO_ACTIVESOCKET answers only for
            // CURLOPT_CONNECT_ONLY transfers).
            if what != CURL_POLL_REMOVE, let easy {
                var owner: UnsafeMutableRawPointer?
                sluice_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &owner)
                if let owner { Unmanaged<EasyHandle>.fromOpaque(owner).takeUnretainedValue().transferSocket = socket }
            }
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
        curl_multi_cleanup(multi)
    }

    /// Transfers in progress.
    public private(set) var activeCount = 0

    /// Starts a transfer. - SeeAlso: `curl_multi_add_handle(3)`.
    public func add(_ handle: EasyHandle) throws(CurlError) {
        handle.transferSocket = -1  // told by the socket callback once the transfer has one
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

    private func watch(socket: curl_socket_t, what: Int32) {
        if what == CURL_POLL_REMOVE {
            watchers.removeValue(forKey: socket)?.cancel()
            return
        }
        var interest: SocketWatcher.Interest = []
        if what & CURL_POLL_IN != 0 { interest.insert(.read) }
        if what & CURL_POLL_OUT != 0 { interest.insert(.write) }
        let watcher =
            watchers[socket]
            ?? {
                let created = SocketWatcher(loop: loop, fd: socket) { [unowned self] fd, ready in
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
