"""A gRPC server and client for Sluice's tests (grpcio from PyPI, in .build/test-venv), with raw
bytes as messages (no generated code).

  grpc_test.py server CERT KEY      TLS server on 127.0.0.1:0; prints its port
      /test.Echo/Unary          answers b"echo:" + the request
      /test.Echo/Stream         answers N messages (N = the request as a number), 20 ms apart
      /test.Echo/Fail           fails with NOT_FOUND "no such thing"
      /test.Echo/Slow           answers after 0.3 s (deadlines expire first)
      /test.Echo/Trailer        answers OK with the request's `x-big` metadata back as a trailer
      /test.Echo/Big            answers N messages of 1 MiB each (N = the request as a number)
      /test.Echo/Collect        (client streaming) answers the sizes of the messages it got, joined by commas
  grpc_test.py client PROXY_PORT localhost:PORT CA_FILE
      the calls through the proxy (grpc_proxy), TLS trusting CA_FILE; prints JSON: unary,
      streaming and failing calls; a 20 000-byte trailer; 250 calls whose 100 ms deadline expires
      while a stream runs beside them on the same channel
  grpc_test.py basic PROXY_PORT localhost:PORT CA_FILE
      a unary call, a stream of 3, a failing call and a 100-byte trailer; prints JSON (a
      recording's replay gives the same)
  grpc_test.py quiet PROXY_PORT localhost:PORT CA_FILE SECONDS
      one /test.Echo/Collect call whose stream sends a message, is quiet SECONDS, then sends
      another; prints JSON: the answer, or the status and details
  grpc_test.py upload PROXY_PORT localhost:PORT CA_FILE N
      one /test.Echo/Collect call streaming N messages of 1 MiB; prints JSON as quiet does
  grpc_test.py big PROXY_PORT localhost:PORT CA_FILE N
      one /test.Echo/Big call for N messages through the proxy; prints JSON: the messages and
      bytes received, and the status
"""
import json
import os
import sys
import time
from concurrent import futures

import grpc


def server(cert, key):
    def unary(request, context):
        return b"echo:" + request

    def stream(request, context):
        for i in range(int(request)):
            yield b"message %d" % i
            time.sleep(0.02)

    def fail(request, context):
        context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")

    def slow(request, context):
        time.sleep(0.3)
        return request

    def trailer(request, context):
        big = dict(context.invocation_metadata()).get("x-big", "")
        context.set_trailing_metadata((("x-big", big),))
        return b"ok"

    def big(request, context):
        for i in range(int(request)):
            yield bytes([i % 256]) * (1 << 20)

    def collect(requests, context):
        return ",".join(str(len(message)) for message in requests).encode()

    handler = grpc.method_handlers_generic_handler("test.Echo", {
        "Collect": grpc.stream_unary_rpc_method_handler(collect),
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
        "Slow": grpc.unary_unary_rpc_method_handler(slow),
        "Trailer": grpc.unary_unary_rpc_method_handler(trailer),
        "Big": grpc.unary_stream_rpc_method_handler(big),
    })
    # (grpcio refuses metadata over 16 KiB unless told otherwise.)
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=64), options=[("grpc.max_metadata_size", 65536)])
    s.add_generic_rpc_handlers((handler,))
    credentials = grpc.ssl_server_credentials([(open(key, "rb").read(), open(cert, "rb").read())])
    port = s.add_secure_port("127.0.0.1:0", credentials)
    s.start()
    print(port, flush=True)
    s.wait_for_termination()


def client(proxy_port, target, ca):
    os.environ["grpc_proxy"] = "http://127.0.0.1:%s" % proxy_port
    credentials = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
    out = {}
    with grpc.secure_channel(target, credentials, options=[("grpc.max_metadata_size", 65536)]) as channel:
        unary = channel.unary_unary("/test.Echo/Unary")
        out["unary"] = unary(b"hello grpc", timeout=10).decode()
        stream = channel.unary_stream("/test.Echo/Stream")
        times, messages = [], []
        started = time.time()
        for message in stream(b"5", timeout=10):
            messages.append(message.decode())
            times.append(round(time.time() - started, 3))
        out["stream"] = messages
        out["stream_times"] = times
        try:
            channel.unary_unary("/test.Echo/Fail")(b"x", timeout=10)
            out["fail"] = "no error"
        except grpc.RpcError as error:
            out["fail"] = [error.code().name, error.details()]
        _, call = channel.unary_unary("/test.Echo/Trailer").with_call(
            b"x", metadata=(("x-big", "b" * 20000),), timeout=10)
        out["trailer"] = len(dict(call.trailing_metadata()).get("x-big", ""))
        # Deadlines that expire (each stream cancelled by the client after 100 ms) are not an
        # attack: the stream running beside them on the same connection goes on.
        running = stream(b"30", timeout=30)
        codes = {}
        calls = [channel.unary_unary("/test.Echo/Slow").future(b"x", timeout=0.1) for _ in range(250)]
        for future in calls:
            try:
                future.result()
                codes["OK"] = codes.get("OK", 0) + 1
            except grpc.RpcError as error:
                codes[error.code().name] = codes.get(error.code().name, 0) + 1
        out["deadlines"] = codes
        try:
            out["beside"] = len(list(running))
        except grpc.RpcError as error:
            out["beside"] = error.code().name
    print(json.dumps(out))


def basic(proxy_port, target, ca):
    os.environ["grpc_proxy"] = "http://127.0.0.1:%s" % proxy_port
    credentials = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
    out = {}
    with grpc.secure_channel(target, credentials) as channel:
        def call(name, make):
            try:
                out[name] = make()
            except grpc.RpcError as error:
                out[name] = [error.code().name, error.details()]
        call("unary", lambda: channel.unary_unary("/test.Echo/Unary")(b"hello", timeout=10).decode())
        call("stream", lambda: [m.decode() for m in channel.unary_stream("/test.Echo/Stream")(b"3", timeout=10)])
        call("fail", lambda: channel.unary_unary("/test.Echo/Fail")(b"x", timeout=10))

        def trailer():
            _, c = channel.unary_unary("/test.Echo/Trailer").with_call(
                b"x", metadata=(("x-big", "t" * 100),), timeout=10)
            return dict(c.trailing_metadata()).get("x-big", "")
        call("trailer", trailer)
    print(json.dumps(out))


def big(proxy_port, target, ca, count):
    os.environ["grpc_proxy"] = "http://127.0.0.1:%s" % proxy_port
    credentials = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
    out = {"messages": 0, "bytes": 0, "status": "OK"}
    with grpc.secure_channel(target, credentials) as channel:
        try:
            for message in channel.unary_stream("/test.Echo/Big")(count.encode(), timeout=60):
                out["messages"] += 1
                out["bytes"] += len(message)
        except grpc.RpcError as error:
            out["status"] = error.code().name
    print(json.dumps(out))


def collect(proxy_port, target, ca, messages):
    """One client-streaming call sending what `messages` yields; its answer or its status."""
    os.environ["grpc_proxy"] = "http://127.0.0.1:%s" % proxy_port
    credentials = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
    out = {}
    with grpc.secure_channel(target, credentials, options=[("grpc.max_send_message_length", 8 << 20)]) as channel:
        try:
            out["answer"] = channel.stream_unary("/test.Echo/Collect")(messages, timeout=60).decode()
        except grpc.RpcError as error:
            out["status"] = [error.code().name, error.details()]
    print(json.dumps(out))


def quiet_stream(seconds):
    yield b"a"
    time.sleep(seconds)
    yield b"bb"


if sys.argv[1] == "quiet":
    collect(sys.argv[2], sys.argv[3], sys.argv[4], quiet_stream(float(sys.argv[5])))
elif sys.argv[1] == "upload":
    collect(sys.argv[2], sys.argv[3], sys.argv[4], (b"u" * (1 << 20) for _ in range(int(sys.argv[5]))))
elif sys.argv[1] == "server":
    server(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "basic":
    basic(sys.argv[2], sys.argv[3], sys.argv[4])
elif sys.argv[1] == "big":
    big(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
else:
    client(sys.argv[2], sys.argv[3], sys.argv[4])
