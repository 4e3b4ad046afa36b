"""An origin for `sluice run`'s tests: the catalog API of Tests/Fixtures/contracts/catalog, with
one answer that breaks its contract (GET /v1/widgets/2 has no name). HTTPS when given a
certificate and key. Prints its port, then serves until killed."""
import http.server
import json
import ssl
import sys

WIDGET = {"id": 1, "name": "Sprocket", "price": 2.5, "tags": [{"slug": "metal"}]}
ANSWERS = {
    "/v1/widgets": (200, {"X-Total": "1"}, {"widgets": [WIDGET], "links": {"next": None}}),
    "/v1/widgets/1": (200, {}, WIDGET),
    "/v1/widgets/2": (200, {}, {"id": 2, "price": 1}),
    "/v1/tags": (200, {}, [{"slug": "metal"}]),
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        status, headers, body = ANSWERS.get(self.path, (404, {}, {"id": "missing", "message": self.path}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if len(sys.argv) == 3:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
