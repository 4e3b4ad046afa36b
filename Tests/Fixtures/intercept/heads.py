"""Request heads on an intercepted HTTP/1.1 connection that do not arrive in one read.

Usage: heads.py PROXY_PORT HOST PORT CA_FILE
  - a head sent in two writes 200 ms apart;
  - a 40 KB head (several TLS records);
  - 30 pipelined GETs in one write.
Prints JSON: the status line of the first two, how many of the 30 were answered, seconds taken.
"""
import json
import socket
import ssl
import sys
import time

proxy_port, host, port, ca = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]


def tunnel():
    raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    raw.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += raw.recv(4096)
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["http/1.1"])
    return context.wrap_socket(raw, server_hostname=host)


def responses(s, count):
    """Reads `count` responses (Content-Length framed); returns their status lines."""
    data = b""
    lines = []
    while len(lines) < count:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            continue
        head = data[:end].decode("latin-1").split("\r\n")
        length = next((int(l.split(":", 1)[1]) for l in head if l.lower().startswith("content-length:")), 0)
        while len(data) < end + 4 + length:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        lines.append(head[0])
        data = data[end + 4 + length:]
    return lines


out = {}
started = time.time()
try:
    s = tunnel()
    request = b"GET /nostore HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port)
    s.sendall(request[:20])
    time.sleep(0.2)
    s.sendall(request[20:])
    out["split"] = responses(s, 1)
    s.sendall(b"GET /nostore HTTP/1.1\r\nHost: %s:%d\r\nCookie: c=%s\r\n\r\n" % (host.encode(), port, b"a" * 40000))
    out["large"] = responses(s, 1)
    s.sendall(request * 30)
    out["pipelined"] = len(responses(s, 30))
except Exception as error:  # a timeout is the answer the test looks for
    out["error"] = repr(error)
out["seconds"] = round(time.time() - started, 3)
print(json.dumps(out))
