import CEvent

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes kept in an anonymous in-memory file (`memfd_create(2)`): mapped read-only so they can
/// be read in place, and sent to sockets by the kernel from the file's own pages (`sendfile(2)`
/// through ``Connection/write(_:file:range:)``), without a copy through user space. Immutable;
/// its memory is the file's pages, counted once however many responses are sending it.
/// - SeeAlso: `evbuffer_file_segment_new(3)`: what a socket's output queue holds of it.
public final class SharedFile {
    /// Its size in bytes.
    public let count: Int
    let fd: Int32
    /// libevent's reference-counted handle: the file stays open while any output queue holds a
    /// part of it, and is closed when the last one is done.
    let segment: OpaquePointer
    private let mapping: UnsafeMutableRawPointer

    /// The bytes, read in place (valid while this object lives).
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mapping, count: count) }

    /// A file holding a copy of `source`; `nil` when the system refused (no memory, no descriptor).
    /// `name` shows in `/proc/PID/fd` (for people looking at the process).
    public init?(copying source: UnsafeRawBufferPointer, name: String) {
        guard let base = source.baseAddress, source.count > 0 else { return nil }
        let fd = sluice_memfd_create(name, UInt32(MFD_CLOEXEC))
        guard fd >= 0 else { return nil }
        var written = 0
        while written < source.count {
            let n = Glibc.write(fd, base + written, source.count - written)
            if n > 0 {
                written += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                Glibc.close(fd)
                return nil
            }
        }
        guard let map = mmap(nil, source.count, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            Glibc.close(fd)
            return nil
        }
        let flags = UInt32(EVBUF_FS_CLOSE_ON_FREE | EVBUF_FS_DISABLE_MMAP | EVBUF_FS_DISABLE_LOCKING)
        guard let segment = evbuffer_file_segment_new(fd, 0, Int64(source.count), flags) else {
            munmap(map, source.count)
            Glibc.close(fd)
            return nil
        }
        self.fd = fd
        self.segment = segment
        mapping = map
        count = source.count
    }

    deinit {
        munmap(mapping, count)
        // Closes the descriptor now, or when the last output queue holding a part is done with it.
        evbuffer_file_segment_free(segment)
    }
}
