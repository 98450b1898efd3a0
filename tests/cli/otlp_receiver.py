# SPDX-License-Identifier: MIT
"""An OTLP/HTTP receiver for the tests of posixtrace export (tests/cli/otlp.sh).

Listens on 127.0.0.1 at a free port (written to PORT_FILE once it listens),
takes POSTs to /v1/traces and /v1/logs, gunzips each body (Content-Encoding:
gzip) and writes it to OUT_DIR/NNNN-traces.pb or NNNN-logs.pb when it answers
200.  FAULTS, a comma-separated list, says how to answer the requests in
turn (then 200):
  ok           200, an empty response
  429:SECS     429 with Retry-After: SECS (a number, or "date" for an HTTP
               date two seconds ahead)
  503, 500     that status, no body
  close        the connection closed before any answer
  stall:SECS   no answer for SECS seconds (the client's timeout is shorter)
  partial:N    200 with partial_success.rejected_<signal> = N and a message
  hostile      200 with a body of 1 MiB: a partial success rejecting 10^12
               items with a message of 5,000 bytes, then zeros
  hold:NAME    creates OUT_DIR/held, then no answer until OUT_DIR/NAME exists
               (at most 120 s), then as ok
  endless      200 with a chunked body that never ends (a chunk every 10 ms)
  drip         a status line, then a header byte a second, never done
Every request's path, answer and body size go to OUT_DIR/requests.log.
Usage: otlp_receiver.py PORT_FILE OUT_DIR [FAULTS]
"""
import email.utils
import gzip
import http.server
import os
import sys
import threading
import time

PORT_FILE, OUT_DIR = sys.argv[1], sys.argv[2]
FAULTS = [f for f in (sys.argv[3] if len(sys.argv) > 3 else "").split(",") if f]
lock = threading.Lock()
count = [0]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def partial_response(rejected, message):
    """Export*ServiceResponse { partial_success (1) { rejected (1), error_message (2) } }"""
    msg = message.encode()
    inner = b"\x08" + varint(rejected) + b"\x12" + varint(len(msg)) + msg
    return b"\x0a" + varint(len(inner)) + inner


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            n = count[0]
            count[0] += 1
        fault = FAULTS[n] if n < len(FAULTS) else "ok"
        signal = {"/v1/traces": "traces", "/v1/logs": "logs"}.get(self.path)
        with open(os.path.join(OUT_DIR, "requests.log"), "a") as log:
            log.write("%d %s %s %s %d %s %s\n" % (n, self.path, fault,
                      self.headers.get("Content-Type"), len(body),
                      self.headers.get("Content-Encoding"),
                      self.headers.get("Authorization", "-").replace(" ", "_")))
        if signal is None:
            self.answer(404)
            return
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        kind, _, arg = fault.partition(":")
        if kind == "429":
            if arg == "date":
                arg = email.utils.formatdate(time.time() + 2, usegmt=True)
            self.answer(429, headers=[("Retry-After", arg)])
        elif kind in ("503", "500", "502", "504"):
            self.answer(int(kind))
        elif kind == "close":
            self.close_connection = True
            self.connection.shutdown(2)
        elif kind == "stall":
            time.sleep(float(arg))
            self.close_connection = True
        elif kind == "endless":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"400\r\n" + bytes(1024) + b"\r\n")
                    self.wfile.flush()
                    time.sleep(0.01)
            except OSError:
                pass
        elif kind == "drip":
            self.close_connection = True
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                self.wfile.flush()
                for _ in range(600):
                    time.sleep(1)
                    self.wfile.write(b"a")
                    self.wfile.flush()
            except OSError:
                pass
        else:
            if kind == "hold":
                open(os.path.join(OUT_DIR, "held"), "a").close()
                for _ in range(1200):
                    if os.path.exists(os.path.join(OUT_DIR, arg)):
                        break
                    time.sleep(0.1)
            with open(os.path.join(OUT_DIR, "%04d-%s.pb" % (n, signal)), "wb") as f:
                f.write(body)
            if kind == "hostile":
                self.answer(200, partial_response(10**12, "m" * 5000) + bytes(1 << 20))
            elif kind == "partial":
                self.answer(200, partial_response(int(arg), "test refused %s" % arg))
            else:
                self.answer(200)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
