#!/bin/bash
# Web import over HTTPS and HTTP/2 (issue 6: "TLS verification on by
# default ... HTTP/2 where available"), against nginx on 127.0.0.1 with a
# certificate of a CA made here (openssl), for 127.0.0.1 only:
# 1. with caFile (the private CA) the crawl SUCCEEDS, every page is
#    indexed, and nginx's log shows each request as HTTP/2.0 (ALPN);
# 2. without caFile the system's CAs do not know the certificate:
#    robots.txt is unreachable (so all is disallowed), the start URL
#    fails, the run FAILS, nothing of it is indexed, no request reached
#    nginx;
# 3. with caFile but as https://localhost the host name is not in the
#    certificate: it fails the same way (host names are verified);
# 4. a caFile that cannot be read fails the run with a message naming it.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

NGINX_PID=""
trap 'rc=$?; kill $NGINX_PID 2>/dev/null || true; cleanup $rc' EXIT

TMP=$(cd "$TMP" && pwd) # nginx wants absolute paths
BODY="$TMP/body"
HEADERS="$TMP/headers"
RUNJSON="$TMP/run.json"

# ---- a CA and a server certificate for 127.0.0.1
T="$TMP/tls"
mkdir -p "$T"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Sluice test CA" \
    -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$T/server.key" -out "$T/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$T/ext.cnf"
openssl x509 -req -in "$T/server.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
    -CAcreateserial -days 2 -extfile "$T/ext.cnf" -out "$T/server.pem" 2>/dev/null

# ---- the site, served by nginx with TLS and HTTP/2
mkdir -p "$TMP/site" "$TMP/nginx/logs"
echo '<html><head><title>Home</title></head><body><a href="a.html">a</a> <a href="b.html">b</a></body></html>' >"$TMP/site/index.html"
echo '<html><head><title>A</title></head><body>alpha page <a href="c.html">c</a></body></html>' >"$TMP/site/a.html"
echo '<html><head><title>B</title></head><body>bravo page</body></html>' >"$TMP/site/b.html"
echo '<html><head><title>C</title></head><body>charlie page <a href="/">home</a></body></html>' >"$TMP/site/c.html"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
USER_LINE=""
[ "$(id -u)" = 0 ] && USER_LINE="user root;" # the workers must read $TMP
cat >"$TMP/nginx.conf" <<EOF
$USER_LINE
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx/logs/error.log;
events { worker_connections 64; }
http {
    log_format proto '\$request_uri \$server_protocol';
    access_log $TMP/access.log proto;
    types { text/html html; }
    server {
        listen 127.0.0.1:$PORT ssl http2;
        ssl_certificate $T/server.pem;
        ssl_certificate_key $T/server.key;
        root $TMP/site;
        location / { index index.html; }
    }
}
EOF
nginx -c "$TMP/nginx.conf" -p "$TMP/nginx" &
NGINX_PID=$!
for _ in $(seq 1 100); do
    curl -s --cacert "$T/ca.pem" -o /dev/null "https://127.0.0.1:$PORT/" && break
    sleep 0.05
done
curl -s --cacert "$T/ca.pem" -o /dev/null "https://127.0.0.1:$PORT/" ||
    { fail "nginx did not start: $(cat "$TMP/nginx/logs/error.log")"; finish; }
SITE="https://127.0.0.1:$PORT"
: >"$TMP/access.log"

start_web_server

# ---- 1. a private CA
define_web h2 "$SITE" h2 ".caFile = \"$T/ca.pem\""
expect_crawl h2 "crawl over HTTPS with caFile SUCCEEDED"
wait_indexed
index_ids "$TMP/ids"
printf '%s\n' "$SITE/" "$SITE/a.html" "$SITE/b.html" "$SITE/c.html" | LC_ALL=C sort >"$TMP/want"
diff -q "$TMP/want" "$TMP/ids" >/dev/null && ok "the four pages are indexed" ||
    fail "index: $(paste -sd' ' "$TMP/ids")"
n=$(grep -c . "$TMP/access.log" || true)
h2=$(grep -c ' HTTP/2.0$' "$TMP/access.log" || true)
[ "$n" -ge 5 ] && [ "$h2" = "$n" ] &&
    ok "every request ($n, robots.txt and the pages) was HTTP/2 (ALPN)" ||
    fail "protocols: $(sort "$TMP/access.log" | uniq -c | head)"
expect_hit charlie "$SITE/c.html" "a page found over HTTP/2 is searchable"

# ---- 2. no caFile: the system's CAs do not know this one
: >"$TMP/access.log"
define_web untrusted "$SITE" untrusted
if crawl untrusted; then
    fail "a crawl of a server with an unknown CA SUCCEEDED"
else
    [ "$(jq -r .state "$RUNJSON")" = FAILED ] &&
        [ "$(jq '[.worker[] | .["robots.unreachable"] // 0] | add' "$RUNJSON")" -ge 1 ] &&
        ok "without caFile the certificate is refused: robots.txt is unreachable (disallow all), the start URL fails, the run FAILED" ||
        fail "untrusted: $(jq -c '{state, worker}' "$RUNJSON")"
fi
[ ! -s "$TMP/access.log" ] && ok "no request reached the server without a verified certificate" ||
    fail "requests: $(cat "$TMP/access.log")"

# ---- 3. the CA, but a host name the certificate does not have
define_web wronghost "https://localhost:$PORT" wronghost ".caFile = \"$T/ca.pem\""
if crawl wronghost; then
    fail "a crawl of https://localhost with a certificate for 127.0.0.1 SUCCEEDED"
else
    [ "$(jq -r .state "$RUNJSON")" = FAILED ] &&
        ok "the host name is verified: https://localhost fails with a certificate for 127.0.0.1" ||
        fail "wronghost: $(jq -c '{state, worker}' "$RUNJSON")"
fi
index_ids "$TMP/ids2"
diff -q "$TMP/want" "$TMP/ids2" >/dev/null && ok "the failed crawls indexed nothing" ||
    fail "index: $(paste -sd' ' "$TMP/ids2")"

# ---- 4. a caFile that is not there
define_web nofile "$SITE" nofile ".caFile = \"$T/missing.pem\""
if crawl nofile; then
    fail "a crawl with a missing caFile SUCCEEDED"
else
    grep -rq "caFile" "$RUNJSON" "$TMP/crawl.err" "$TMP/server.log" 2>/dev/null &&
        ok "a caFile that cannot be read fails the run, naming caFile" ||
        fail "nofile: $(jq -c . "$RUNJSON" | head -c 400)"
fi

finish
