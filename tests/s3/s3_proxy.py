#!/usr/bin/env python3
"""A front of an S3 server for the tests.  Prints its port on stdout.

  s3_proxy.py --upstream http://127.0.0.1:PORT [--every N --count-file F]
              [--outage-file F] [--verify KEY:SECRET] [--log FILE]

--every N: every Nth request is answered 503 or 429 (with Retry-After)
  without reaching the server (the retry tests); --count-file counts them.
  A request (method, path and query) faulted by this rule is not faulted
  again by it when it comes next: the client's retries always win, however
  many requests run in parallel.
--outage-file F: while file F exists, every HEAD of a bulk written (PUT)
  through this proxy as a single output (a key not ending in "/" or in a
  number) is answered 503, however often it is retried: an outage longer
  than a client's retries that spares the writer's look before it writes
  and its check of "multiple" outputs, and hits the looks after it (the
  jobmanager's at a finished task's outputs, a reader's).
--verify: the AWS Signature V4 of each request signed with key id KEY is
  computed again by botocore (an implementation independent of libcurl's)
  from the headers the request names in SignedHeaders; a mismatch, a
  signed header the request does not carry, or an Authorization header of
  that key that is not V4 is answered 403 SignatureDoesNotMatch.  s3rver checks only the
  key id of a V4 request, so this is what checks the signatures.
--log: a line per request: "METHOD HOST PATH -> STATUS" (with " sig=ok"
  when --verify checked its signature), and "BADSIG" lines for signatures
  that did not match.
Everything else is passed on as it came (Host included) and the answer
passed back."""
import argparse, http.client, http.server, os, re, socketserver, threading, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--upstream", required=True)
ap.add_argument("--every", type=int, default=0)
ap.add_argument("--count-file")
ap.add_argument("--outage-file")
ap.add_argument("--verify")
ap.add_argument("--log")
args = ap.parse_args()
up = urllib.parse.urlsplit(args.upstream)
lock = threading.Lock()
state = {"n": 0, "injected": 0, "written": set(), "faulted": set()}
AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,\s*"
                  r"SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$")


def log(line):
    if args.log:
        with lock, open(args.log, "a") as f:
            f.write(line + "\n")


def signature_ok(handler):
    """None when the request is not ours to check, else True or False."""
    if not args.verify:
        return None
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    key, secret = args.verify.split(":", 1)
    auth_header = handler.headers.get("Authorization", "")
    m = AUTH.match(auth_header)
    if not m:
        # ours but not a V4 header this proxy can read: a failure too
        return False if ("Credential=%s/" % key) in auth_header else None
    if m.group(1) != key:
        return None
    _, _, region, service, signed, sig = m.groups()
    missing = [h for h in signed.split(";") if h not in handler.headers]
    if missing:
        log("BADSIG signed headers not in the request: %s" % ",".join(missing))
        return False
    headers = {h: handler.headers.get(h, "") for h in signed.split(";")}
    req = AWSRequest(method=handler.command, url="http://%s%s" % (headers.get("host", ""), handler.path),
                     headers=headers)
    req.context["timestamp"] = headers.get("x-amz-date", "")
    auth = S3SigV4Auth(Credentials(key, secret), service, region)
    canonical = auth.canonical_request(req)
    want = auth.signature(auth.string_to_sign(req, canonical), req)
    if want != sig:
        log("BADSIG canonical request %r, headers %r" % (canonical, dict(handler.headers)))
    return want == sig


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, msg, extra=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(msg)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(msg)

    def handle_one(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        host = self.headers.get("Host", "")
        ok = signature_ok(self)
        sig = {None: "", True: " sig=ok", False: ""}[ok]
        if ok is False:
            log("BADSIG %s %s %s" % (self.command, host, self.path))
            self.answer(403, b"<Error><Code>SignatureDoesNotMatch</Code>"
                        b"<Message>checked by s3_proxy.py</Message></Error>")
            return
        path = urllib.parse.urlsplit(self.path).path
        with lock:
            outage = (args.outage_file is not None and self.command == "HEAD" and
                      path in state["written"] and os.path.exists(args.outage_file))
            state["n"] += 1
            key = (self.command, self.path)
            every = args.every > 0 and state["n"] % args.every == 0 and key not in state["faulted"]
            if every:
                state["faulted"].add(key)
            else:
                state["faulted"].discard(key)
            fault = outage or every
            if fault:
                state["injected"] += 1
                injected = state["injected"]
                if args.count_file:
                    # whole or not at all: a reader never sees it empty
                    with open(args.count_file + ".tmp", "w") as f:
                        f.write("%d\n" % injected)
                    os.replace(args.count_file + ".tmp", args.count_file)
        if fault:
            log("%s %s %s -> injected%s" % (self.command, host, self.path, " outage" if outage else ""))
            msg = b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>"
            self.answer(503 if outage or injected % 2 else 429, msg, [("Retry-After", "0")])
            return
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
        c.request(self.command, self.path, body=body if body or self.command in ("PUT", "POST") else None,
                  headers=headers)
        r = c.getresponse()
        data = r.read()
        if self.command == "PUT" and r.status == 200 and args.outage_file and \
                not re.search(r"(/|/[0-9]+)$", path):
            with lock:
                state["written"].add(path)
        log("%s %s %s -> %d%s" % (self.command, host, self.path, r.status, sig))
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
