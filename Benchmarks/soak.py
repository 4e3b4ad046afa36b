"""Soak traffic for Benchmarks/soak.sh: a fault-injecting origin and a mixed client load through
Sluice, with Sluice's RSS and descriptor count sampled every interval. Python standard library only.

usage: soak.py PROXY_PORT ORIGIN_PORT SLUICE_PID SECONDS INTERVAL
"""
import http.client, json, os, random, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

proxy_port, origin_port, pid, seconds, interval = (int(a) for a in sys.argv[1:6])
BODY = bytes(random.Random(7).getrandbits(8) for _ in range(16384))
NULLS = json.dumps({"items": [{"id": i, "note": None, "tags": [None, "x"], "meta": {"a": None, "b": i}}
                              for i in range(200)]}).encode()


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.startswith("/cache/"):
            size = 512 + (hash(path) % 16) * 1024
            self.send(200, BODY[:size], [("Cache-Control", "max-age=20"), ("Content-Type", "application/octet-stream")])
        elif path.startswith("/nocache/"):
            self.send(200, BODY[:2048], [("Cache-Control", "no-store")])
        elif path.startswith("/json"):
            self.send(200, NULLS, [("Content-Type", "application/json"), ("Cache-Control", "max-age=5")])
        elif path.startswith("/strict/"):
            self.send(404, b"<html>not here</html>", [("Content-Type", "text/html")])
        elif path.startswith("/reset"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(BODY[:5000])
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            self.close_connection = True
        elif path.startswith("/slow"):
            time.sleep(1.5)
            self.send(200, b"late")
        else:
            self.send(200, b"ok")

    do_HEAD = do_GET

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(length)
        self.send(200, str(len(data)).encode(), [("Cache-Control", "no-store")])


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients (Sluice) hang up on resets and timeouts by design


origin = QuietServer(("127.0.0.1", origin_port), Origin)
origin.daemon_threads = True
threading.Thread(target=origin.serve_forever, daemon=True).start()

counts = {}
lock = threading.Lock()
stop = time.time() + seconds


def count(kind):
    with lock:
        counts[kind] = counts.get(kind, 0) + 1


def url(path):
    return "http://127.0.0.1:%d%s" % (origin_port, path)


def tunnel():
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=5)
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (origin_port, origin_port))
    head = s.recv(4096)
    if b" 200 " in head.split(b"\r\n")[0]:
        s.sendall(b"GET /inside HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while s.recv(65536):
            pass
        count("tunnel")
    else:
        count("tunnel-refused")
    s.close()


def worker(seed):
    rng = random.Random(seed)
    conn = None
    while time.time() < stop:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=10)
            roll = rng.random()
            headers = {}
            if roll < 0.45:
                kind, path = "hit-or-miss", "/cache/%d" % rng.randrange(3000)
            elif roll < 0.60:
                kind, path = "miss", "/nocache/%d" % rng.randrange(1000000)
            elif roll < 0.72:
                kind, path = "strip", "/json"
                headers["Sluice-Strip-Nulls"] = "1"
            elif roll < 0.80:
                kind, path = "validation-failure", "/strict/%d" % rng.randrange(100)
            elif roll < 0.85:
                kind, path = "post", "/upload"
            elif roll < 0.90:
                tunnel()
                continue
            elif roll < 0.95:
                kind, path = "reset", "/reset/%d" % rng.randrange(1000000)
            elif roll < 0.97:
                kind, path = "timeout", "/slow"
            else:
                kind, path = "refused", None
            if path is None:
                conn.request("GET", "http://127.0.0.1:1/")  # nothing listens there: 502
            elif kind == "post":
                conn.request("POST", url(path), body=BODY[:rng.randrange(1, 16384)], headers=headers)
            else:
                conn.request("GET", url(path), headers=headers)
            response = conn.getresponse()
            response.read()
            count("%s %d" % (kind, response.status))
            if response.will_close:
                conn.close()
                conn = None
        except Exception as error:  # resets and timeouts end the connection, by design
            count("%s %s" % (kind, type(error).__name__))
            if conn is not None:
                conn.close()
            conn = None


def sample():
    with open("/proc/%d/status" % pid) as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return rss // 1024, len(os.listdir("/proc/%d/fd" % pid))


threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(16)]
for thread in threads:
    thread.start()
samples = []
start = time.time()
print("  time   RSS MiB   fds   requests")
while time.time() < stop:
    time.sleep(min(interval, max(0.1, stop - time.time())))
    rss, fds = sample()
    total = sum(counts.values())
    samples.append((rss, fds))
    print("%5ds   %7d   %4d   %8d" % (time.time() - start, rss, fds, total), flush=True)
for thread in threads:
    thread.join(timeout=15)
time.sleep(2)
rss, fds = sample()
print("after the load: RSS %d MiB, %d descriptors" % (rss, fds))
print("exchanges: " + ", ".join("%s: %d" % item for item in sorted(counts.items())))
# Flat: after the first interval (warm-up: cache, pools, allocator), RSS may not keep growing.
warm = samples[min(1, len(samples) - 1)]
peak_rss = max(s[0] for s in samples[1:] or samples)
peak_fds = max(s[1] for s in samples[1:] or samples)
flat = peak_rss <= warm[0] * 1.15 + 8 and fds <= samples[0][1] + 16
print("verdict: %s (RSS after warm-up %d MiB, peak %d MiB; descriptors peak %d, after %d)"
      % ("flat" if flat else "NOT FLAT", warm[0], peak_rss, peak_fds, fds))
sys.exit(0 if flat else 1)
