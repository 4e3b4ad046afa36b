"""HTTP/2 abuse through Sluice's interception, frames written by hand (RFC 9113, RFC 7541).

Usage: abuse.py MODE PROXY_PORT HOST PORT CA_FILE
  rapid-reset   opens streams and cancels each at once (CVE-2023-44487), up to 20 000
  continuation  a HEADERS frame without END_HEADERS followed by up to 100 000 empty CONTINUATION frames
  hpack-bomb    one 4 KiB header field put in the dynamic table, then referenced 4 000 times in one block
  short-body    a POST announcing content-length: 10 whose stream ends after 3 bytes
  big-head      GET /nostore with 70 000 bytes of fields (HEADERS and CONTINUATION frames); the answer's body in "body"
  schemes       GET /nostore with :scheme http (stream 1) and foo (stream 3) on the TLS connection
  trailers      a POST to /heads: HEADERS, DATA and trailing HEADERS (x-trailer, authorization)
                in one write; the response body (the field names the origin got) is in "body"
  stalled-body  a POST announcing content-length: 100 that sends 1 byte and then nothing (waits 10 s)
  no-read       SETTINGS_INITIAL_WINDOW_SIZE 0, then GET /big?n=3000000: its DATA never fits (waits 10 s)
  error-in-flight  GET /big?n=2000000&delay_ms=200 (a slow answer), then WINDOW_UPDATE 0 on stream 0
                (a connection error): "closed" says whether the connection closed within 3 s of the GOAWAY
  host-mismatch GET /nostore with :authority the origin's and host: evil.example
  many-fields   GET /many?n=3000 (3 000 small response fields); the body in "body"
  neighbour     POST /slowread (8 MiB, an origin that reads nothing for 8 s) on stream 1, sent as the
                windows allow; then POST /anything (100 KiB) on stream 3: "neighbour_ms" is how long
                stream 3 took to be answered (its window must not wait for stream 1's origin)
Prints JSON: what the server did (GOAWAY and its error code, resets, responses) and how long it took.
"""
import json
import socket
import ssl
import struct
import sys
import time

mode, proxy_port, host, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]


def frame(kind, flags, stream, payload=b""):
    return struct.pack("!I", len(payload))[1:] + bytes([kind, flags]) + struct.pack("!I", stream) + payload


def literal(name, value):  # literal header field without indexing, new name
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def integer(value, prefix_bits, first=0):
    """An HPACK integer (RFC 7541 §5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    encoded = bytes([first | limit])
    value -= limit
    while value >= 128:
        encoded += bytes([value % 128 + 128])
        value //= 128
    return encoded + bytes([value])


def request_block(path=b"/plain"):
    return (literal(b":method", b"GET") + literal(b":scheme", b"https") + literal(b":authority", b"%s:%d" % (host.encode(), port))
            + literal(b":path", path))


raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
raw.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
head = b""
while b"\r\n\r\n" not in head:
    head += raw.recv(1)
context = ssl.create_default_context(cafile=ca)
context.set_alpn_protocols(["h2"])
s = context.wrap_socket(raw, server_hostname=host)
assert s.selected_alpn_protocol() == "h2", s.selected_alpn_protocol()
settings = struct.pack("!HI", 4, 0) if mode == "no-read" else b""  # SETTINGS_INITIAL_WINDOW_SIZE
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, settings))
s.settimeout(0.0)

out = {"goaway": None, "resets": 0, "responses": 0, "sent": 0, "closed": False, "body": "", "ended": False}
buffer = b""
# Send windows (RFC 9113 §6.9): the connection's (0), each stream's increments, the initial one.
windows = {0: 65535, "initial": 65535}
ended_at = {}


def pump():
    global buffer
    try:
        while True:
            data = s.recv(65536)
            if not data:
                out["closed"] = True
                break
            buffer += data
    except (ssl.SSLWantReadError, BlockingIOError):
        pass
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
        out["closed"] = True
    while len(buffer) >= 9:
        length = struct.unpack("!I", b"\x00" + buffer[:3])[0]
        if len(buffer) < 9 + length:
            break
        kind, flags = buffer[3], buffer[4]
        stream_of = struct.unpack("!I", buffer[5:9])[0] & 0x7FFFFFFF
        payload = buffer[9:9 + length]
        buffer = buffer[9 + length:]
        if kind == 7:
            out["goaway"] = struct.unpack("!I", payload[4:8])[0]
        elif kind == 3:
            out["resets"] += 1
            out["reset_code"] = struct.unpack("!I", payload[:4])[0]
        elif kind == 1:
            out["responses"] += 1
        elif kind == 0:
            if mode == "neighbour":  # reads as it goes: its receive windows kept open
                if length:
                    increment = struct.pack("!I", length)
                    s.sendall(frame(8, 0, 0, increment) + frame(8, 0, stream_of, increment))
            else:
                out["body"] += payload.decode("latin-1")
            if flags & 1:
                out["ended"] = True
        elif kind == 4 and not flags & 1:
            for at in range(0, len(payload) - 5, 6):
                ident, value = struct.unpack("!HI", payload[at:at + 6])
                if ident == 4:
                    windows["initial"] = value
            s.sendall(frame(4, 1, 0))
        elif kind == 8:
            windows[stream_of] = windows.get(stream_of, 0) + (struct.unpack("!I", payload[:4])[0] & 0x7FFFFFFF)
        if (kind == 0 or kind == 1) and flags & 1:
            ended_at.setdefault(stream_of, time.time())


def send(data):
    try:
        s.settimeout(5)
        s.sendall(data)
        s.settimeout(0.0)
        return True
    except OSError:
        out["closed"] = True
        s.settimeout(0.0)
        pump()
        return False


started = time.time()
if mode == "rapid-reset":
    for i in range(20000):
        stream = 2 * i + 1
        if not send(frame(1, 0x5, stream, request_block()) + frame(3, 0, stream, struct.pack("!I", 8))):
            break
        out["sent"] += 1
        if i % 50 == 0:
            pump()
            if out["goaway"] is not None or out["closed"]:
                break
elif mode == "continuation":
    send(frame(1, 0x1, 1, request_block()))  # END_STREAM, no END_HEADERS
    for i in range(100000):
        if not send(frame(9, 0, 1, b"")):
            break
        out["sent"] += 1
        if i % 500 == 0:
            pump()
            if out["goaway"] is not None or out["closed"]:
                break
elif mode == "hpack-bomb":
    value = b"v" * 4000
    # Literal with incremental indexing, new name; value length 4000 as an HPACK integer (7-bit prefix).
    length = 4000 - 127
    encoded = bytes([0x7F])
    while length >= 128:
        encoded += bytes([length % 128 + 128])
        length //= 128
    encoded += bytes([length])
    block = request_block() + b"\x40" + bytes([6]) + b"x-bomb" + encoded + value + b"\xbe" * 4000
    send(frame(1, 0x5, 1, block[:16384]))
    rest = block[16384:]
    out["sent"] = len(block)
    if rest:
        send(frame(1, 0x5, 3, request_block()))  # a second, ordinary request after it
elif mode == "short-body":
    block = (literal(b":method", b"POST") + literal(b":scheme", b"https")
             + literal(b":authority", b"%s:%d" % (host.encode(), port)) + literal(b":path", b"/echo")
             + literal(b"content-length", b"10"))
    send(frame(1, 0x4, 1, block) + frame(0, 0x1, 1, b"abc"))
elif mode == "big-head":
    block = request_block(b"/nostore")
    for n in range(5):  # five fields of 14 000 bytes (nghttp2 refuses one field over 64 KiB)
        block += b"\x00" + integer(7, 7) + b"x-big-%d" % n + integer(14000, 7) + b"a" * 14000
    pieces = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    data = frame(1, 0x1, 1, pieces[0])
    for index, piece in enumerate(pieces[1:], start=1):
        data += frame(9, 0x4 if index == len(pieces) - 1 else 0, 1, piece)
    send(data)
elif mode == "schemes":
    for stream, scheme in ((1, b"http"), (3, b"foo")):
        block = (literal(b":method", b"GET") + literal(b":scheme", scheme)
                 + literal(b":authority", b"%s:%d" % (host.encode(), port)) + literal(b":path", b"/nostore"))
        send(frame(1, 0x5, stream, block))
elif mode == "trailers":
    block = (literal(b":method", b"POST") + literal(b":scheme", b"https")
             + literal(b":authority", b"%s:%d" % (host.encode(), port)) + literal(b":path", b"/heads")
             + literal(b"content-type", b"text/plain"))
    trailers = literal(b"x-trailer", b"t") + literal(b"authorization", b"Bearer T")
    send(frame(1, 0x4, 1, block) + frame(0, 0x0, 1, b"hello") + frame(1, 0x5, 1, trailers))
elif mode == "stalled-body":
    block = (literal(b":method", b"POST") + literal(b":scheme", b"https")
             + literal(b":authority", b"%s:%d" % (host.encode(), port)) + literal(b":path", b"/echo")
             + literal(b"content-length", b"100"))
    send(frame(1, 0x4, 1, block) + frame(0, 0x0, 1, b"a"))
elif mode == "no-read":
    send(frame(1, 0x5, 1, request_block(b"/big?n=3000000")))
elif mode == "error-in-flight":
    send(frame(1, 0x5, 1, request_block(b"/big?n=2000000&delay_ms=200")))
    until = time.time() + 3
    while time.time() < until and out["responses"] == 0:
        time.sleep(0.02)
        pump()
    send(frame(8, 0, 0, struct.pack("!I", 0)))  # WINDOW_UPDATE with a zero increment
elif mode == "host-mismatch":
    send(frame(1, 0x5, 1, request_block(b"/nostore") + literal(b"host", b"evil.example")))
elif mode == "many-fields":
    send(frame(1, 0x5, 1, request_block(b"/many?n=3000")))
elif mode == "neighbour":
    def post(stream, path, length):
        send(frame(1, 0x4, stream, literal(b":method", b"POST") + literal(b":scheme", b"https")
                   + literal(b":authority", b"%s:%d" % (host.encode(), port)) + literal(b":path", path)
                   + literal(b"content-length", str(length).encode())))

    def upload(stream, left, until):
        """Sends DATA on `stream` as the windows allow, until `left` is sent or `until`."""
        sent = 0
        while left > 0 and time.time() < until and not out["closed"]:
            pump()
            room = min(windows[0], windows["initial"] + windows.get(stream, 0) - sent, left, 16384)
            if room <= 0:
                time.sleep(0.01)
                continue
            windows[0] -= room
            left -= room
            sent += room
            send(frame(0, 0x1 if left == 0 else 0x0, stream, b"u" * room))
        return sent
    post(1, b"/slowread", 8 << 20)
    out["stalled_sent"] = upload(1, 8 << 20, time.time() + 2)
    posted = time.time()
    post(3, b"/anything", 100 << 10)
    upload(3, 100 << 10, time.time() + 8)
    while 3 not in ended_at and time.time() < posted + 8 and not out["closed"]:
        time.sleep(0.01)
        pump()
    out["neighbour_ms"] = round((ended_at[3] - posted) * 1000) if 3 in ended_at else None
pump()
deadline = time.time() + (10 if mode in ("stalled-body", "no-read") else 3)
answered = ("hpack-bomb", "short-body", "stalled-body", "host-mismatch")
if mode == "no-read":  # the head comes; then only the end of the stream counts
    while time.time() < deadline and out["resets"] == 0 and not out["closed"] and out["goaway"] is None:
        time.sleep(0.02)
        pump()
    deadline = 0
if mode == "schemes":
    while time.time() < deadline and out["responses"] + out["resets"] < 2 and not out["closed"]:
        time.sleep(0.02)
        pump()
while time.time() < deadline and out["goaway"] is None and not out["closed"] and not (mode in answered and out["resets"] + out["responses"] > 0) and not out["ended"] and not (mode == "trailers" and out["resets"] > 0):
    time.sleep(0.02)
    pump()
if mode == "error-in-flight":  # after the GOAWAY, the connection must close (RFC 9113 §5.4.1)
    until = time.time() + 3
    while time.time() < until and not out["closed"]:
        time.sleep(0.02)
        pump()
out["seconds"] = round(time.time() - started, 3)
print(json.dumps(out))
