import EventIO
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Blocking loopback sockets for tests (origins and raw clients), with timeouts.
public final class TestSocket: @unchecked Sendable {
    /// The descriptor.
    public let fd: Int32
    private let closed = Locked(false)

    init(fd: Int32) {
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        setTimeout(seconds: 10)
    }

    deinit { close() }

    /// Connects to `host`:`port` (an IPv4 address, 127.0.0.1 by default).
    public static func connect(host: String = "127.0.0.1", port: UInt16, timeout: Double = 10) throws -> TestSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw TestError("connect to \(host):\(port) failed: errno \(errno)")
        }
        let socket = TestSocket(fd: fd)
        socket.setTimeout(seconds: timeout)
        return socket
    }

    /// Receive and send timeouts.
    public func setTimeout(seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends every byte (or throws).
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw TestError("send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends a string's UTF-8 bytes.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads up to `max` bytes; empty at end of stream; throws on timeout or error.
    public func receive(max: Int = 65536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        if count < 0 { throw TestError(errno == EAGAIN ? "receive timed out" : "receive failed: errno \(errno)") }
        return Array(buffer[0..<count])
    }

    /// Half-closes the sending side.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Closes with RST.
    public func reset() {
        guard !closed.withLock({ $0 }) else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Closes. Only the thread that uses the socket may close it: a descriptor closed under
    /// another thread's blocking call is reused by the next socket and read by the wrong owner.
    public func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            Glibc.close(fd)
        }
    }

    /// Wakes any thread blocked on this socket (both directions shut down) without freeing the
    /// descriptor; that thread then closes it.
    public func abort() {
        closed.withLock { closed in if !closed { shutdown(fd, Int32(SHUT_RDWR)) } }
    }
}

/// This machine's first IPv4 address that is not loopback (to be a "remote" client), if any.
public func nonLoopbackIPv4() -> String? {
    NetworkInterfaces.ipv4().map(\.address).first { !$0.hasPrefix("127.") }
}

/// A listening loopback socket on port 0.
public final class TestListener: @unchecked Sendable {
    /// The descriptor.
    public let fd: Int32
    /// The port the kernel chose.
    public let port: UInt16

    /// Listens on 127.0.0.1:0.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 512) == 0 else { throw TestError("bind/listen failed: errno \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    private let stopped = Locked(false)

    /// Waits for the next connection; `nil` once ``close()`` was called (the descriptor is then
    /// freed here, by the accepting thread, so it cannot be reused under a blocked `accept`).
    public func accept() -> TestSocket? {
        let client = Glibc.accept(fd, nil, nil)
        if stopped.withLock({ $0 }) || client < 0 {
            if client >= 0 { Glibc.close(client) }
            if stopped.withLock({ $0 }) { Glibc.close(fd) }
            return nil
        }
        return TestSocket(fd: client)
    }

    /// Closes a listener that no thread accepts on (used to find a free port, or a closed one).
    public func closeUnused() {
        stopped.withLock { $0 = true }
        Glibc.close(fd)
    }

    /// Stops listening: new connections are refused at once; a blocked ``accept()`` returns `nil`.
    public func close() {
        stopped.withLock { $0 = true }
        shutdown(fd, Int32(SHUT_RDWR))
    }
}

/// A test-support failure.
public struct TestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
