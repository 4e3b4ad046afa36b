/// A growable array of `Element` on manually managed memory, for the validator's hot state: its
/// subscript is an addressor (elements are read and written in place), with no bounds or
/// uniqueness checks. The owner keeps indices below ``count``.
final class Arena<Element> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 4)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Element {
        @inline(__always) unsafeAddress { UnsafePointer(base + index) }
        @inline(__always) unsafeMutableAddress { base + index }
    }

    var last: Element? { count > 0 ? base[count - 1] : nil }

    @inline(__always) func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity *= 2
    }

    /// Drops the elements from `start` on.
    @inline(__always) func truncate(to start: Int) {
        guard start < count else { return }
        (base + start).deinitialize(count: count - start)
        count = start
    }

    func removeLast() -> Element {
        count -= 1
        return (base + count).move()
    }
}

/// Bytes on manually managed memory (the member names on the path to the current value).
final class ByteStack {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity = 256

    init() { base = .allocate(capacity: capacity) }
    deinit { base.deallocate() }

    /// Replaces everything from `start` with `bytes`.
    @inline(__always) func replace(from start: Int, with bytes: UnsafeRawBufferPointer) {
        let needed = start + bytes.count
        if needed > capacity {
            while capacity < needed { capacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            bigger.update(from: base, count: count)
            base.deallocate()
            base = bigger
        }
        if bytes.count > 0 {
            (base + start).update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count = needed
    }

    func truncate(to start: Int) { count = min(count, start) }

    /// Room for `bytes` bytes from the start (the contents are not kept).
    func reserve(_ bytes: Int) -> UnsafeMutablePointer<UInt8> {
        if bytes > capacity {
            while capacity < bytes { capacity *= 2 }
            base.deallocate()
            base = .allocate(capacity: capacity)
            count = 0
        }
        return base
    }

    func text(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }
}

/// An open container as both engines keep it: what a JSON Pointer into the body is made of.
protocol PointerFrame {
    var isObject: Bool { get }
    /// Members or items seen so far (the current item is the last).
    var count: Int { get }
    /// The current member's name, as a range of the key stack.
    var keyStart: Int { get }
    var keyEnd: Int { get }
}

extension ByteStack {
    /// The JSON Pointer of the value at nesting `depth`: the member names and item positions of
    /// the first `depth` open containers (`/items/3/price`). One writer for both engines, so
    /// their violations point alike.
    /// `nextItem`: where the innermost array's next item goes (bytes that failed to be one).
    func pointer(_ frames: Arena<some PointerFrame>, depth: Int, nextItem: Bool = false) -> String {
        var out = ""
        let depth = min(depth, frames.count)
        for index in 0..<depth {
            let frame = frames[index]
            if frame.isObject {
                out += "/" + Value.escape(text(frame.keyStart, frame.keyEnd))
            } else if nextItem, index == depth - 1 {
                out += "/\(frame.count)"
            } else {
                out += "/\(max(frame.count - 1, 0))"
            }
        }
        return out
    }
}
