#!/usr/bin/env python3
"""Test site for web_extract_wait.sh: / links /big.zip and /big2.zip (N
small entries each, served at once) and /slow.zip (answers after S seconds).  Both carry an
ETag, so the crawler reads only their headers and the webExtractor
downloads them in one task."""
import io, sys, time, zipfile, argparse, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

ap = argparse.ArgumentParser()
ap.add_argument("--port-file", required=True)
ap.add_argument("--entries", type=int, default=30000)
ap.add_argument("--slow", type=float, default=0.5)
args = ap.parse_args()

def make_zip(n):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        for i in range(n):
            z.writestr("e/%06d.txt" % i, "entry %d\n" % i)
    return b.getvalue()

BIG = make_zip(args.entries)
SMALL = make_zip(3)

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        if self.path == "/":
            body, ctype = b'<html><body><a href="/big.zip">b</a> <a href="/big2.zip">b2</a> <a href="/slow.zip">s</a></body></html>', "text/html"
        elif self.path in ("/big.zip", "/big2.zip"):
            body, ctype = BIG, "application/zip"
        elif self.path == "/slow.zip":
            time.sleep(args.slow)
            body, ctype = SMALL, "application/zip"
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"%s-%d"' % (self.path, len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the crawler cuts compounds after their headers


srv = Server(("127.0.0.1", 0), H)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os; os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
