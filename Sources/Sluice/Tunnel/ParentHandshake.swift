/// Opening a blind tunnel through a parent proxy, as bytes in and out (pure; the ``Tunnel``
/// moves them): an HTTP `CONNECT` (RFC 9110 §9.3.6, with `Proxy-Authorization: Basic` when the
/// parent has credentials), or a SOCKS5 `CONNECT` by name (RFC 1928, RFC 1929 for user and
/// password). The parent's refusals become problems that name it, never its credentials.
struct ParentHandshake {
    let parent: ParentProxy
    let host: String
    let port: UInt16
    private var stage: Stage

    private enum Stage {
        case httpResponse
        case socksMethod
        case socksAuthentication
        case socksReply
    }

    /// What to do after bytes arrived.
    enum Step: Equatable {
        /// Not enough bytes yet.
        case needMore
        /// Send these, after consuming `consumed` bytes of input; more answers follow.
        case reply([UInt8], consumed: Int)
        /// The tunnel is open after `consumed` bytes (what follows is the origin's).
        case established(consumed: Int)
        case failed(SluiceError)
    }

    /// Largest answer read from the parent before the tunnel opens.
    static let headLimit = 16 * 1024

    /// With an `https://` parent, the bytes go through the TLS the ``Tunnel`` agreed with it.
    init(parent: ParentProxy, host: String, port: UInt16) {
        self.parent = parent
        self.host = host
        self.port = port
        switch parent.scheme {
        case .http, .https: stage = .httpResponse
        case .socks5h: stage = .socksMethod
        }
    }

    /// The first bytes to send once connected to the parent.
    var opening: [UInt8] {
        switch parent.scheme {
        case .http, .https:
            let authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
            var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let authorization = parent.basicAuthorization { text += "Proxy-Authorization: \(authorization)\r\n" }
            return Array((text + "\r\n").utf8)
        case .socks5h:
            // Methods offered: none, and user/password when there are credentials.
            return parent.username == nil ? [5, 1, 0] : [5, 2, 0, 2]
        }
    }

    private func failure(_ detail: String) -> Step {
        .failed(.upstreamFailed(reason: .parentFailed(parent: parent.description, detail: detail)))
    }

    mutating func receive(_ input: UnsafeRawBufferPointer) -> Step {
        switch stage {
        case .httpResponse:
            return httpResponse(input)
        case .socksMethod:
            guard input.count >= 2 else { return .needMore }
            guard input[0] == 5 else { return failure("it does not speak SOCKS5") }
            switch input[1] {
            case 0:
                stage = .socksReply
                return .reply(socksConnect, consumed: 2)
            case 2 where parent.username != nil:
                stage = .socksAuthentication
                let user = Array((parent.username ?? "").utf8.prefix(255))
                let password = Array((parent.password ?? "").utf8.prefix(255))
                return .reply([1, UInt8(user.count)] + user + [UInt8(password.count)] + password, consumed: 2)
            default:
                return .failed(.upstreamFailed(reason: .parentAuthRequired(parent: parent.description)))
            }
        case .socksAuthentication:
            guard input.count >= 2 else { return .needMore }
            guard input[1] == 0 else {
                return .failed(.upstreamFailed(reason: .parentAuthRequired(parent: parent.description)))
            }
            stage = .socksReply
            return .reply(socksConnect, consumed: 2)
        case .socksReply:
            guard input.count >= 5 else { return .needMore }
            guard input[0] == 5 else { return failure("it does not speak SOCKS5") }
            guard input[1] == 0 else {
                return failure("it refused the tunnel to \(host):\(port) (SOCKS reply \(input[1]))")
            }
            let length: Int
            switch input[3] {
            case 1: length = 4 + 4 + 2
            case 4: length = 4 + 16 + 2
            case 3: length = 4 + 1 + Int(input[4]) + 2
            default: return failure("an invalid SOCKS reply")
            }
            guard input.count >= length else { return .needMore }
            return .established(consumed: length)
        }
    }

    /// SOCKS5 CONNECT by name (`socks5h`: the parent resolves it).
    private var socksConnect: [UInt8] {
        let name = Array(host.trimmingCharacters(in: "[]").utf8.prefix(255))
        return [5, 1, 0, 3, UInt8(name.count)] + name + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }

    private func httpResponse(_ input: UnsafeRawBufferPointer) -> Step {
        guard let end = Self.headEnd(input) else {
            return input.count >= Self.headLimit ? failure("its answer to the CONNECT is over 16 KiB") : .needMore
        }
        // The status line alone (a reason phrase may be empty: `HTTP/1.1 200` then CRLF).
        var lineEnd = 0
        while lineEnd < end, input[lineEnd] != 0x0D, input[lineEnd] != 0x0A { lineEnd += 1 }
        guard let head = StatusLine.parse(UnsafeRawBufferPointer(rebasing: input[..<lineEnd])) else {
            return failure("it answered the CONNECT with something that is not HTTP")
        }
        switch head.status {
        case 200..<300: return .established(consumed: end)
        case 407: return .failed(.upstreamFailed(reason: .parentAuthRequired(parent: parent.description)))
        default: return failure("it answered \(head.status) to the CONNECT for \(host):\(port)")
        }
    }

    /// The index past the blank line ending a head, if it arrived.
    private static func headEnd(_ input: UnsafeRawBufferPointer) -> Int? {
        guard input.count >= 4 else { return nil }
        for index in 3..<input.count
        where input[index] == 0x0A && input[index - 1] == 0x0D && input[index - 2] == 0x0A && input[index - 3] == 0x0D {
            return index + 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
