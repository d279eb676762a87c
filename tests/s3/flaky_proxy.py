#!/usr/bin/env python3
"""A flaky front of an S3 server, for the retry tests: every Nth request
is answered 503 (or 429 with Retry-After) without reaching the server,
every other one is passed on as it came (s3rver checks key ids, not
signatures, so the changed Host does not matter) and its answer passed
back.  Prints its port on stdout; counts what it injected in --count-file.
  flaky_proxy.py --upstream http://127.0.0.1:PORT --every 3 --count-file F"""
import argparse, http.client, http.server, socketserver, sys, threading, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--upstream", required=True)
ap.add_argument("--every", type=int, default=3)
ap.add_argument("--count-file", required=True)
args = ap.parse_args()
up = urllib.parse.urlsplit(args.upstream)
lock = threading.Lock()
state = {"n": 0, "injected": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle_one(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with lock:
            state["n"] += 1
            fault = state["n"] % args.every == 0
            if fault:
                state["injected"] += 1
                with open(args.count_file, "w") as f:
                    f.write("%d\n" % state["injected"])
        if fault:
            status = 503 if state["injected"] % 2 else 429
            msg = b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>"
            self.send_response(status)
            self.send_header("Content-Length", str(len(msg)))
            self.send_header("Retry-After", "0")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(msg)
            return
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
        c.request(self.command, self.path, body=body if body or self.command in ("PUT", "POST") else None,
                  headers=headers)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data) if self.command != "HEAD" else
                                                r.getheader("Content-Length") or 0))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        c.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_one


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


s = Server(("127.0.0.1", 0), Handler)
print(s.server_address[1], flush=True)
s.serve_forever()
