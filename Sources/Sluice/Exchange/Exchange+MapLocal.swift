#if canImport(Glibc)
    import Glibc
#endif

/// Map local: a rule's `respond:` answers the request; no origin, no cache.
extension Exchange {
    func mapLocal(_ answer: MapLocal) {
        notes.mapping = "local"
        var bytes: [UInt8]
        switch answer.body {
        case .text(let text): bytes = Array(text.utf8)
        case .file(let path):
            switch LocalAnswer.readFile(path, limit: env.transformLimit) {
            case .success(let read): bytes = read
            case .failure(let failure):
                return fail(
                    .upstreamFailed(
                        reason: .mapLocalFailed(rule: route.rule.name, file: path, detail: failure.detail)))
            }
        }
        if MapLocal.isBodiless(answer.status) { bytes = [] }
        dropRequestBody()
        let headOnly = request.method == "HEAD"
        let head = LocalAnswer.mapped(
            answer, bodyLength: bytes.count, date: env.date.now, keepAlive: output.keepAlive)
        answerWhole(head, body: headOnly ? [] : bytes, bodyBytes: headOnly ? 0 : Int64(bytes.count))
        finishIfDone()
    }

    /// The onboarding page (``Onboarding``): the page, or the CA in one of its forms.
    func answerOnboarding(_ path: String) {
        guard let answer = env.onboarding.answer(path: path, reachedAt: request.headers[.host]) else {
            return fail(.badRequest(reason: .onboardingNotFound(path)))
        }
        notes.mapping = "onboarding"
        dropRequestBody()
        var headers = HTTPFields()
        headers.append(name: "Content-Type", value: answer.contentType, code: .contentType)
        headers.append(name: "Content-Length", value: String(answer.body.count), code: .contentLength)
        headers.append(name: "Cache-Control", value: "no-store", code: .cacheControl)
        headers.append(name: "X-Content-Type-Options", value: "nosniff")
        if let filename = answer.filename {
            headers.append(name: "Content-Disposition", value: "attachment; filename=\"\(filename)\"")
            // A device that refused Sluice's certificate before it had the CA (the usual order:
            // proxy set, an app retried, then the CA installed) is intercepted again at once.
            if answer.status == 200 { client.servedCertificate() }
        } else {
            headers.append(
                name: "Content-Security-Policy", value: "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
        }
        headers.append(name: "Date", value: env.date.now, code: .date)
        Forwarding.appendVia(&headers, version: "1.1")
        if !output.keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        let head = ResponseHead(status: answer.status, reason: ReasonPhrase.standard(answer.status), headers: headers)
        let headOnly = request.method == "HEAD"
        answerWhole(head, body: headOnly ? [] : answer.body, bodyBytes: headOnly ? 0 : Int64(answer.body.count))
        finishIfDone()
    }

    /// An answer that is not the origin's (a stored or local one) to a request with content:
    /// what the client already sent of it (at most 1 MiB) is read and dropped, so that its next
    /// request is read (pipelined behind it); a body not all there yet closes the connection
    /// after the answer, which says so.
    func dropRequestBody() {
        guard !body.isComplete else { return }
        discardBufferedBody()
        if !body.isComplete { output.keepAlive = false }
    }

    /// Reads and drops the request body bytes already buffered (at most 1 MiB).
    private func discardBufferedBody() {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        var dropped = 0
        while !body.isComplete, dropped < 1 << 20 {
            let read = scratch.withUnsafeMutableBytes { body.read(from: client.stream, into: $0) }
            guard case .bytes(let count) = read else { return }
            dropped += count
        }
    }
}

extension LocalAnswer {
    /// The head of a map-local answer: the rule's fields (with a `Content-Type` from the file's
    /// extension when it names none), then Sluice's framing, `Date` and `Via`.
    static func mapped(_ answer: MapLocal, bodyLength: Int, date: String, keepAlive: Bool) -> ResponseHead {
        var headers = answer.headers
        if !headers.contains(.contentType), !MapLocal.isBodiless(answer.status) {
            switch answer.body {
            case .file(let path):
                headers.append(name: "Content-Type", value: MapLocal.mediaType(forFile: path), code: .contentType)
            case .text(let text) where !text.isEmpty:
                headers.append(name: "Content-Type", value: "text/plain; charset=utf-8", code: .contentType)
            case .text: break
            }
        }
        if !MapLocal.isBodiless(answer.status) {
            headers.append(name: "Content-Length", value: String(bodyLength), code: .contentLength)
        }
        if !headers.contains(.date) { headers.append(name: "Date", value: date, code: .date) }
        Forwarding.appendVia(&headers, version: "1.1")
        if !keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        return ResponseHead(status: answer.status, reason: ReasonPhrase.standard(answer.status), headers: headers)
    }

    /// What happened to a map-local file, for the 502 ("the file X, which …").
    struct FileFailure: Error {
        let detail: String
    }

    /// A map-local file's bytes.
    static func readFile(_ path: String, limit: Int) -> Result<[UInt8], FileFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return .failure(
                FileFailure(
                    detail: code == ENOENT
                        ? "does not exist (any more)" : "cannot be opened: \(String(cString: strerror(code)))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .failure(FileFailure(detail: "is not a regular file"))
        }
        guard info.st_size <= limit else {
            return .failure(FileFailure(detail: "is larger than limits.max_transform_body (\(limit) bytes)"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return .failure(FileFailure(detail: "could not be read whole")) }
            filled += got
        }
        return .success(bytes)
    }
}
