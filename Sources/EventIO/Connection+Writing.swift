import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Writing: straight to the socket when nothing is queued, the rest through the output buffer.
extension Connection {
    /// Writes bytes: straight to the socket when nothing is queued (no copy, no extra loop turn),
    /// and whatever the socket does not take now goes to the output buffer (copied). In a busy
    /// loop turn a small write is held until the turn's end instead (``held``).
    ///
    /// `more`: more of the same message follows at once (a streamed body), so the kernel may hold
    /// back a partial segment (`MSG_MORE`) instead of sending one small packet, and waking the
    /// peer, per write. What it holds goes out with the next write without `more`, or at the end
    /// of this loop turn at the latest. For sockets with `TCP_NODELAY` (``setNoDelay()``).
    public func write(_ bytes: UnsafeRawBufferPointer, more: Bool = false) {
        write(
            pieces: (bytes, UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0)),
            count: 1, more: more)
    }

    static func sendFlags(more: Bool) -> Int32 {
        Int32(MSG_NOSIGNAL | MSG_DONTWAIT) | (more ? Int32(MSG_MORE) : 0)
    }

    func noteHeld(_ more: Bool) {
        // A send without MSG_MORE pushes out everything queued before it.
        holding = more
        if more { loop.pushAtTurnEnd(self) }
    }

    /// Writes two pieces in one system call when nothing is queued (`sendmsg`), else queues them;
    /// `more` as in ``write(_:more:)``.
    public func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, more: Bool = false) {
        write(pieces: (first, second, UnsafeRawBufferPointer(start: nil, count: 0)), count: 2, more: more)
    }

    /// Writes three pieces in one system call when nothing is queued (`sendmsg`), else queues them.
    public func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        more: Bool = false
    ) {
        write(pieces: (first, second, third), count: 3, more: more)
    }

    /// Writes four pieces in two system calls when nothing is queued, else queues them.
    public func write(
        _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
        _ fourth: UnsafeRawBufferPointer, more: Bool = false
    ) {
        guard let bev, !writeBroken else { return }
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            write(pieces: (first, second, third), count: 3, more: true)
            return write(fourth, more: more)
        }
        for piece in [first, second, third, fourth] where piece.count > 0 {
            bufferevent_write(bev, piece.baseAddress!, piece.count)
        }
    }

    /// The body of the writes: the pieces stay on the stack (no array per write). Held bytes
    /// (``held``) go first, in the same system call.
    private func write(
        pieces: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer), count: Int, more: Bool
    ) {
        guard let bev, !writeBroken else { return }
        let total = pieces.0.count + pieces.1.count + (count == 3 ? pieces.2.count : 0)
        guard total > 0 else { return }
        var skip = 0
        var heldCount = 0
        if directWrites, evbuffer_get_length(bufferevent_get_output(bev)) == 0 {
            if holds(adding: total) {
                hold(pieces.0)
                hold(pieces.1)
                if count == 3 { hold(pieces.2) }
                return
            }
            func vector(_ piece: UnsafeRawBufferPointer) -> iovec {
                iovec(iov_base: UnsafeMutableRawPointer(mutating: piece.baseAddress), iov_len: piece.count)
            }
            heldCount = held.count
            let sent = held.withUnsafeBytes { heldBytes in
                var vectors = (vector(heldBytes), vector(pieces.0), vector(pieces.1), vector(pieces.2))
                return withUnsafeMutableBytes(of: &vectors) { raw in
                    var message = msghdr()
                    let all = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                    // Without held bytes, the first vector is left out.
                    message.msg_iov = heldCount > 0 ? all : all + 1
                    message.msg_iovlen = heldCount > 0 ? count + 1 : count
                    return sendmsg(bufferevent_getfd(bev), &message, Connection.sendFlags(more: more))
                }
            }
            if sent > 0 { skip = sent } else if sent < 0, peerGone(errno) { return }
            noteHeld(more)
        }
        // Whatever the socket did not take is queued, in order.
        func queue(_ piece: UnsafeRawBufferPointer) {
            guard let base = piece.baseAddress, piece.count > 0 else { return }
            if skip >= piece.count {
                skip -= piece.count
                return
            }
            bufferevent_write(bev, base + skip, piece.count - skip)
            skip = 0
        }
        if heldCount > 0 {
            held.withUnsafeBytes { queue($0) }
            releaseHeld()
        }
        queue(pieces.0)
        queue(pieces.1)
        if count == 3 { queue(pieces.2) }
    }

    /// Writes `head`, then bytes `range` of `file` sent by the kernel from the file's pages
    /// (`sendfile`): nothing of the file is copied through user space. Directly when nothing is
    /// queued; what the socket does not take now is queued (the head copied, the file's part by
    /// reference) and goes out as the socket drains. The file's part ends the write (no `more`).
    public func write(_ head: UnsafeRawBufferPointer, file: SharedFile, range: Range<Int>) {
        sendHeld(more: true)
        guard let bev, !writeBroken else { return }
        let output = bufferevent_get_output(bev)
        var headSent = 0
        var offset = range.lowerBound
        if directWrites, evbuffer_get_length(output) == 0 {
            let fd = bufferevent_getfd(bev)
            if let base = head.baseAddress, head.count > 0 {
                // With MSG_MORE: the head waits for the file's first bytes, sent right after, to
                // fill its packet (one packet and one wakeup of the client less per response;
                // `sendfile` pushes its last segment), whether or not the loop is busy.
                let sent = send(fd, base, head.count, Connection.sendFlags(more: !range.isEmpty))
                if sent > 0 { headSent = sent } else if sent < 0, peerGone(errno) { return }
            }
            if headSent == head.count, !range.isEmpty {
                var position = off_t(offset)
                let sent = sendfile(fd, file.fd, &position, range.upperBound - offset)
                if sent > 0 { offset += sent } else if sent < 0, peerGone(errno) { return }
            }
            // A head held back by MSG_MORE with no file bytes after it yet goes out at the end of the turn.
            noteHeld(offset < range.upperBound)
        }
        if headSent < head.count, let base = head.baseAddress {
            bufferevent_write(bev, base + headSent, head.count - headSent)
        }
        if offset < range.upperBound {
            evbuffer_add_file_segment(output, file.segment, Int64(offset), Int64(range.upperBound - offset))
        }
    }

    /// After a failed direct write: `true` (and an `.error` event at the next loop turn, never
    /// from inside the write) when the socket is dead rather than full.
    func peerGone(_ code: Int32) -> Bool {
        guard code != EAGAIN, code != EWOULDBLOCK, code != EINTR, code != ENOBUFS, code != ENOMEM else {
            return false
        }
        writeBroken = true
        releaseHeld()
        if let bev { evbuffer_drain(bufferevent_get_output(bev), evbuffer_get_length(bufferevent_get_output(bev))) }
        loop.callSoon { [weak self] in
            guard let self, !self.isClosed else { return }
            // Through `report`: a connection closing after its flush (a refusal's, with no
            // delegate) closes now, not when its linger timer ends (a storm of refused clients
            // that reset held a descriptor each for two seconds).
            self.report(.error(code: code, resolving: false))
        }
        return true
    }

    /// Whether ``write(_:)`` may write to the socket directly; `true` except while flushing to close.
    var directWrites: Bool { !flushThenClose }

    /// Appends an array's bytes to the output buffer.
    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    /// Appends a string's UTF-8 bytes to the output buffer.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }
}
