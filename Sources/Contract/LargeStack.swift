#if canImport(Glibc)
    import Glibc
#endif

/// Work that recurses as deep as its input nests, run on a thread of its own whose stack is
/// sized for it (reserved, not touched until used), the caller waiting for its result.
enum LargeStack {
    /// What the thread runs; the caller waits for it to end before reading what it wrote.
    private final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// `body`'s result, computed on a thread with a stack of `bytes`; `nil` when no such thread
    /// can be made (the caller's stack is not enough, or it would not have asked).
    static func run<T>(bytes: Int, _ body: @escaping () -> T) -> T? {
        var result: T?
        guard start(Job { result = body() }, bytes: bytes) else { return nil }
        return result
    }

    /// Runs `job` on a new thread with a stack of `bytes` and waits for it; `false` when no
    /// thread could be made.
    private static func start(_ job: Job, bytes: Int) -> Bool {
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        defer { attributes.deallocate() }
        guard pthread_attr_init(attributes) == 0 else { return false }
        defer { pthread_attr_destroy(attributes) }
        let page = 1 << 16
        guard pthread_attr_setstacksize(attributes, (bytes + page - 1) / page * page) == 0 else { return false }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(job).toOpaque()
        let started = pthread_create(
            &thread, attributes,
            { context in
                Unmanaged<Job>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<Job>.fromOpaque(context).release()
            return false
        }
        pthread_join(thread, nil)
        return true
    }
}
