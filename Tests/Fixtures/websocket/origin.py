"""A WebSocket origin for Sluice's tests (the `websockets` package from PyPI, in .build/test-venv).

Usage: origin.py [CERT KEY]: plain, or TLS with that certificate; prints its port on the first line.
  /echo          echoes every message (text as text, binary as binary); permessage-deflate when offered
  /greet         sends "hello" and a 3-fragment text message, then echoes
  /flood?n=B&size=S[&random=1]   sends B bytes in binary messages of S bytes (random: incompressible),
                 then closes with 1000 "done"
  /close         closes at once with 4001 "bye"
  /refuse        answers 403 text/plain "no websockets here" instead of switching
"""
import asyncio
import http
import os
import ssl
import sys
from urllib.parse import parse_qs, urlparse

from websockets.asyncio.server import serve
from websockets.frames import Frame, Opcode


async def handler(connection):
    url = urlparse(connection.request.path)
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    if url.path == "/close":
        await connection.close(4001, "bye")
        return
    if url.path == "/flood":
        total, size = int(query.get("n", "1048576")), int(query.get("size", "65536"))
        chunk = os.urandom(size) if query.get("random") else bytes(i % 251 for i in range(size))
        sent = 0
        while sent < total:
            piece = chunk[: min(size, total - sent)]
            await connection.send(piece)
            sent += len(piece)
        await connection.close(1000, "done")
        return
    if url.path == "/greet":
        await connection.send("hello")
        await connection.send(["one ", "two ", "three"])  # a fragmented message
    async for message in connection:
        await connection.send(message)


def refuse(connection, request):
    if request.path == "/refuse":
        return connection.respond(http.HTTPStatus.FORBIDDEN, "no websockets here\n")
    return None


async def main():
    context = None
    if len(sys.argv) == 3:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
    async with serve(handler, "127.0.0.1", 0, ssl=context, process_request=refuse, max_size=None,
                     ping_interval=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.Future()


asyncio.run(main())
