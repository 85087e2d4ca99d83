#!/usr/bin/env python3
"""slowstore: a small HTTP object store on the loopback with a set bandwidth and latency.

Serves the files of one folder (GET /NAME) on 127.0.0.1 only, as remote storage (an object store,
a parallel file system) presents itself to a DataLoader: every request first waits --latency-ms,
then its bytes leave through one token bucket of --bandwidth-mb-s shared by every connection
(chunks of 64 KiB are sent in the order they were asked for, so concurrent readers share the
bandwidth about equally). Nothing is cached here; a reader may keep a local cache
(tools/train_example.py --http).

    /usr/bin/python3 tools/slowstore.py ROOT --bandwidth-mb-s 20 --latency-ms 2

prints `port N` on its first line once it listens (port 0 = any free port), and serves until
SIGTERM or SIGINT. tools/train_example.py starts and stops it itself.
"""

import argparse
import http.server
import os
import signal
import sys
import threading
import time

CHUNK = 64 * 1024


class Bucket:
    """A token bucket without burst: chunk i may leave at the earliest when the bytes asked for
    before it have left at `rate` bytes/s (virtual finish times, one lock)."""

    def __init__(self, rate):
        self.rate = rate
        self.next_free = 0.0
        self.lock = threading.Lock()

    def take(self, n):
        if self.rate <= 0:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_free)
            self.next_free = start + n / self.rate
            until = self.next_free
        delay = until - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive: one connection per reader process
    # TCP_NODELAY: without it Nagle's algorithm holds a response's last partial segment until
    # the reader's delayed ACK (40 ms on Linux), a stall per request that is no part of the
    # store being modelled (a first capture showed one worker at 40 ms per request).
    disable_nagle_algorithm = True

    def log_message(self, *args):   # quiet
        pass

    def do_GET(self):
        srv = self.server
        name = self.path.lstrip("/")
        if not name or "/" in name or name.startswith("."):
            self.send_error(404)
            return
        path = os.path.join(srv.root, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            self.send_error(404)
            return
        if srv.latency_s > 0:
            time.sleep(srv.latency_s)
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        for off in range(0, len(data), CHUNK):
            piece = data[off:off + CHUNK]
            srv.bucket.take(len(piece))
            self.wfile.write(piece)
        with srv.count_lock:
            srv.requests += 1
            srv.bytes_sent += len(data)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", help="folder whose files are served")
    p.add_argument("--bandwidth-mb-s", type=float, default=0.0,
                   help="bandwidth shared by every connection, MB/s (1e6 bytes; 0 = unlimited)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="wait per request, ms")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    a = p.parse_args(argv)
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.root = a.root
    srv.latency_s = a.latency_ms / 1e3
    srv.bucket = Bucket(a.bandwidth_mb_s * 1e6)
    srv.count_lock = threading.Lock()
    srv.requests = srv.bytes_sent = 0

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"port {srv.server_address[1]}", flush=True)
    srv.serve_forever()
    srv.server_close()
    print(f"served {srv.requests} requests, {srv.bytes_sent} bytes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
