/// Reads an event stream as the HTML standard's "interpret an event stream" (§9.2.6): lines end
/// with CRLF, LF or CR; a leading BOM is dropped; `:` starts a comment; a blank line dispatches
/// the event when it has data. Each dispatched event comes out as the JSON object OAS 3.2 models
/// it as (§4.14.4): `data` with the lines joined by LF, `event`, `id`, `retry` (digits only).
struct EventReader {
    enum Output {
        case event([UInt8])
        /// An event (or one line of it) longer than the limit: not checked.
        case tooLarge
    }

    private var line: [UInt8] = []
    private var lineTooLong = false
    /// A CR ended the last line: a LF right after it belongs to it.
    private var afterCR = false
    private var started = false
    private var data: [UInt8]?
    private var type: [UInt8]?
    private var id: [UInt8]?
    private var retry: [UInt8]?
    private var size = 0
    private var eventTooLarge = false

    /// `emit` gets each event with where in `bytes` it ended (after its blank line).
    mutating func feed(_ bytes: UnsafeRawBufferPointer, limit: Int, _ emit: (Output, Int) -> Void) {
        var index = 0
        let count = bytes.count
        if !started, count > 0 {
            // The UTF-8 BOM, when the stream starts with it (it may come in pieces).
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let have = line.count
            var match = true
            var taken = 0
            while have + taken < 3, taken < count {
                if bytes[taken] != bom[have + taken] { match = false }
                taken += 1
            }
            if match, have + taken < 3 {
                line.append(contentsOf: bytes[0..<taken])
                return
            }
            started = true
            if match {
                line.removeAll()
                index = taken
            }
        }
        while index < count {
            let byte = bytes[index]
            if afterCR {
                afterCR = false
                if byte == 0x0A {
                    index += 1
                    continue
                }
            }
            if byte == 0x0A || byte == 0x0D {
                afterCR = byte == 0x0D
                let end = index + (byte == 0x0D && index + 1 < count && bytes[index + 1] == 0x0A ? 2 : 1)
                endLine(limit: limit) { emit($0, end) }
                index += 1
                continue
            }
            var end = index
            while end < count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            if !lineTooLong {
                if line.count + (end - index) > limit {
                    lineTooLong = true
                    line.removeAll()
                } else {
                    line.append(contentsOf: bytes[index..<end])
                }
            }
            index = end
        }
    }

    private mutating func endLine(limit: Int, _ emit: (Output) -> Void) {
        defer {
            line.removeAll(keepingCapacity: true)
            lineTooLong = false
        }
        if lineTooLong {
            eventTooLarge = true
            return
        }
        if line.isEmpty { return dispatch(emit) }
        if line[0] == 0x3A { return }  // a comment
        let colon = line.firstIndex(of: 0x3A)
        let name = line[..<(colon ?? line.endIndex)]
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        // Each line's value and the line feed that joins it: counted even when empty (`data:`
        // lines without end must not grow the event without bound).
        size += value.count + 1
        if size > limit { eventTooLarge = true }
        if eventTooLarge {
            data = nil
            return
        }
        if name.elementsEqual("data".utf8) {
            if data == nil { data = [] }
            data!.append(contentsOf: value)
            data!.append(0x0A)
        } else if name.elementsEqual("event".utf8) {
            type = Array(value)
        } else if name.elementsEqual("id".utf8) {
            if !value.contains(0) { id = Array(value) }
        } else if name.elementsEqual("retry".utf8) {
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { retry = Array(value) }
        }
    }

    private mutating func dispatch(_ emit: (Output) -> Void) {
        defer {
            data = nil
            type = nil
            id = nil
            retry = nil
            size = 0
            eventTooLarge = false
        }
        if eventTooLarge { return emit(.tooLarge) }
        guard var data else { return }
        data.removeLast()
        func string(_ bytes: [UInt8]) -> String { Value.string(String(decoding: bytes, as: UTF8.self)).json }
        var json = "{\"data\":" + string(data)
        if let type, !type.isEmpty { json += ",\"event\":" + string(type) }
        if let id { json += ",\"id\":" + string(id) }
        if let retry {
            // Leading zeros are not JSON: the digits as the integer they are.
            let digits = retry.drop { $0 == 0x30 }
            json += ",\"retry\":" + (digits.isEmpty ? "0" : String(decoding: digits, as: UTF8.self))
        }
        json += "}"
        emit(.event(Array(json.utf8)))
    }
}
