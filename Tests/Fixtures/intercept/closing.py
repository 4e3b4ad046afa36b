"""How an intercepted HTTP/1.1 client may end its TLS: Sluice must notice at once.

Usage: closing.py PROXY_PORT HOST PORT CA_FILE
  - after:    GET /json, read the answer, send close_notify: Sluice answers with its own and closes;
  - together: GET /json and close_notify in one write: the GET is still answered, then the close;
  - forged:   a record that does not authenticate after a GET: Sluice closes.
Each for TLS 1.2 and 1.3. Prints JSON {case: {"status": first status line or "", "closed": bool,
"close_notify": bool, "seconds": float}}; a connection still open after 5 s is "closed": false.
"""
import json
import os
import socket
import ssl
import sys
import time

proxy_port, host, port, ca = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
GET = b"GET /json HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port)


def tunnel(version):
    raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    raw.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += raw.recv(1)
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["http/1.1"])
    context.minimum_version = context.maximum_version = version
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=host)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outgoing.read())
            incoming.write(raw.recv(65536))
    raw.sendall(outgoing.read())
    return raw, tls, incoming, outgoing


def listen(raw, tls, incoming, until):
    """Reads for up to 5 s: the plain text, whether close_notify and the TCP close came."""
    raw.settimeout(0.2)
    started = time.time()
    plain, notify, closed = b"", False, False
    while time.time() - started < 5 and not closed and not until(plain, notify):
        try:
            data = raw.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            closed = True
            break
        if not data:
            closed = True
            break
        incoming.write(data)
        try:
            while True:
                piece = tls.read()
                if not piece:
                    notify = True
                    break
                plain += piece
        except ssl.SSLWantReadError:
            pass
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            notify = True
        except ssl.SSLError:
            pass
    return plain, notify, closed, time.time() - started


def answered(plain):
    end = plain.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = plain[:end].decode("latin-1").split("\r\n")
    length = next((int(l.split(":", 1)[1]) for l in head if l.lower().startswith("content-length:")), 0)
    return len(plain) >= end + 4 + length


def run(case, version):
    raw, tls, incoming, outgoing = tunnel(version)
    tls.write(GET)
    if case == "after":
        raw.sendall(outgoing.read())
        plain, _, _, _ = listen(raw, tls, incoming, lambda p, n: answered(p))
        try:
            tls.unwrap()
        except ssl.SSLWantReadError:
            pass
        raw.sendall(outgoing.read())
        _, notify, closed, seconds = listen(raw, tls, incoming, lambda p, n: False)
    elif case == "together":
        try:
            tls.unwrap()
        except ssl.SSLWantReadError:
            pass
        raw.sendall(outgoing.read())  # the GET's record and close_notify, one write
        plain, notify, closed, seconds = listen(raw, tls, incoming, lambda p, n: False)
    else:
        raw.sendall(outgoing.read())
        plain, _, _, _ = listen(raw, tls, incoming, lambda p, n: answered(p))
        raw.sendall(b"\x17\x03\x03\x00\x40" + os.urandom(64))  # application data that fails its tag
        _, notify, closed, seconds = listen(raw, tls, incoming, lambda p, n: False)
    raw.close()
    status = plain.split(b"\r\n")[0].decode("latin-1") if plain else ""
    return {"status": status, "closed": closed, "close_notify": notify, "seconds": round(seconds, 2)}


result = {}
for name, version in [("1.2", ssl.TLSVersion.TLSv1_2), ("1.3", ssl.TLSVersion.TLSv1_3)]:
    for case in ["after", "together", "forged"]:
        result["%s %s" % (case, name)] = run(case, version)
print(json.dumps(result))
