"""WebSocket clients for Sluice's tests, through the proxy (the `websockets` package from PyPI).

Usage: client.py MODE PROXY_PORT URL [CA_FILE]
  wss      wss:// through CONNECT (websockets' own proxy support), TLS trusting CA_FILE:
           text, binary, a 200 KiB text, a ping, then a close; prints JSON with what came back
  flood    wss:// through CONNECT; reads everything slowly (a slow reader), prints bytes and close code
  refuse   the handshake for /refuse: prints the status the client saw
  pause    wss:// without compression, for message breakpoints on what the client sends: "edit me"
           (the greeting is read while it waits), "drop me" then "after", "inject before me";
           prints JSON with what came back
  leave    wss:// without compression: sends "leave me" (to be paused), then closes the TCP
           connection without a close frame after a second
  keepalive wss:// to /echo without compression: sends "hold me" (to be paused), then a ping
           (its pong awaited 5 s) and "after"; prints JSON with the pong's fate and the echoes
  raw      ws:// as an absolute-form GET with Upgrade on the plain port, frames written by hand
           (masked, a fragmented text, a ping): prints JSON with what came back
"""
import asyncio
import base64
import json
import os
import socket
import ssl
import struct
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

mode, proxy_port, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
proxy = "http://127.0.0.1:%d" % proxy_port


def context():
    if url.startswith("wss:"):
        return ssl.create_default_context(cafile=sys.argv[4])
    return None


async def wss():
    out = {}
    async with connect(url, proxy=proxy, ssl=context(), max_size=None, ping_interval=None,
                       open_timeout=10) as ws:
        out["extensions"] = [e.name for e in ws.protocol.extensions]
        if url.endswith("/greet"):
            out["greeting"] = [await ws.recv(), await ws.recv()]
        await ws.send("hello sluice")
        out["text"] = await ws.recv()
        await ws.send(bytes(range(256)))
        out["binary"] = list(await ws.recv()) == list(range(256))
        big = "x" * (200 * 1024)
        await ws.send(big)
        out["big"] = len(await ws.recv())
        started = time.perf_counter()
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 5)
        out["ping_ms"] = (time.perf_counter() - started) * 1000
        rtts = []
        for _ in range(200):
            started = time.perf_counter()
            await ws.send("x")
            await ws.recv()
            rtts.append((time.perf_counter() - started) * 1000)
        rtts.sort()
        out["rtt_p50_ms"] = rtts[len(rtts) // 2]
        await ws.close(1000, "thanks")
        out["close_code"] = ws.close_code
    print(json.dumps(out))


async def flood():
    received = 0
    async with connect(url, proxy=proxy, ssl=context(), max_size=None, ping_interval=None, open_timeout=10,
                       max_queue=2, compression=None) as ws:
        try:
            while True:
                message = await ws.recv()
                received += len(message)
                if received % (32 << 20) < len(message):
                    await asyncio.sleep(0.05)  # a slow reader now and then
        except Exception:
            pass
        print(json.dumps({"bytes": received, "close_code": ws.close_code, "close_reason": ws.close_reason}))


async def pause():
    out = {}
    async with connect(url, proxy=proxy, ssl=context(), max_size=None, ping_interval=None, open_timeout=10,
                       compression=None) as ws:
        await ws.send("edit me")
        # The other direction flows while this one waits.
        out["greeting"] = [await asyncio.wait_for(ws.recv(), 10), await asyncio.wait_for(ws.recv(), 10)]
        out["edited"] = await asyncio.wait_for(ws.recv(), 30)
        await ws.send("drop me")
        await ws.send("after")
        out["after_drop"] = await asyncio.wait_for(ws.recv(), 30)
        await ws.send("inject before me")
        out["injected"] = [await asyncio.wait_for(ws.recv(), 30), await asyncio.wait_for(ws.recv(), 30)]
        await ws.close(1000, "done")
    print(json.dumps(out))


async def leave():
    async with connect(url, proxy=proxy, ssl=context(), max_size=None, ping_interval=None, open_timeout=10,
                       compression=None) as ws:
        await ws.send("leave me")
        await asyncio.sleep(1)
        ws.transport.abort()
    print(json.dumps({"left": True}))


async def keepalive():
    out = {}
    async with connect(url, proxy=proxy, ssl=context(), max_size=None, ping_interval=None, open_timeout=10,
                       compression=None) as ws:
        await ws.send("hold me")
        pong = await ws.ping(b"still there?")  # at once: usually read with the message
        try:
            await asyncio.wait_for(pong, 5)
            out["pong_while_paused"] = True
        except asyncio.TimeoutError:
            out["pong_while_paused"] = False
        await ws.send("after")
        out["echoes"] = [await asyncio.wait_for(ws.recv(), 30), await asyncio.wait_for(ws.recv(), 30)]
        await ws.close(1000, "done")
        out["close_code"] = ws.close_code
    print(json.dumps(out))


async def refuse():
    try:
        async with connect(url, proxy=proxy, ssl=context(), open_timeout=10):
            print(json.dumps({"status": 101}))
    except InvalidStatus as error:
        print(json.dumps({"status": error.response.status_code, "body": error.response.body.decode()}))


def raw():
    """A client that speaks to the proxy as a proxy: absolute-form, frames by hand."""
    host_port = url.split("/")[2]
    path = "/" + url.split("/", 3)[3]
    key = base64.b64encode(os.urandom(16)).decode()
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    s.sendall(("GET http://%s%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (host_port, path, host_port, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    status = int(head.split(b" ")[1])
    out = {"status": status, "head": head.decode()}
    if status != 101:
        print(json.dumps(out))
        return

    def send(opcode, payload, fin=True):
        mask = os.urandom(4)
        length = len(payload)
        header = bytes([(0x80 if fin else 0) | opcode])
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", length)
        s.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    buffer = b""

    def read_exact(n):
        nonlocal buffer
        while len(buffer) < n:
            chunk = s.recv(65536)
            if not chunk:
                raise EOFError
            buffer += chunk
        data, buffer = buffer[:n], buffer[n:]
        return data

    def recv():
        first, second = read_exact(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", read_exact(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", read_exact(8))[0]
        return first & 0x0F, read_exact(length)

    send(0x1, b"frag", fin=False)
    send(0x0, b"mented", fin=False)
    send(0x9, b"ping in between")
    send(0x0, b" text", fin=True)
    replies = [recv(), recv()]
    out["pong"] = [r[1].decode() for r in replies if r[0] == 0xA]
    out["echo"] = [r[1].decode() for r in replies if r[0] == 0x1]
    send(0x2, bytes([0, 1, 2, 255]))
    opcode, payload = recv()
    out["binary"] = list(payload)
    send(0x8, struct.pack("!H", 1000) + b"done")
    opcode, payload = recv()
    out["close"] = struct.unpack("!H", payload[:2])[0]
    s.close()
    print(json.dumps(out))


if mode == "raw":
    raw()
else:
    asyncio.run({"wss": wss, "flood": flood, "refuse": refuse, "pause": pause, "leave": leave,
                 "keepalive": keepalive}[mode]())
