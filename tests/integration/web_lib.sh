# shellcheck shell=bash
# Helpers for the web import tests (web_*.sh), sourced after lib.sh and
# import_lib.sh: test web servers on loopback ports (web_site.py or a
# script of the test's own), crawl jobs of the webCrawling workflows
# defined over REST from one default set of parameters, and the checks
# every web test makes: a crawl SUCCEEDED, a worker counter of the run,
# the index's ids, a search hit, the requests in a site's access log.
# Each check is one ok/fail line, as expect_status and expect_jq are.

# ---- test web servers, killed on exit
SITE_PIDS=""
SITE=""
SITE_LOG=""
# shellcheck disable=SC2086 # SITE_PIDS is a list of pids
trap 'rc=$?; kill $SITE_PIDS 2>/dev/null; cleanup $rc' EXIT

# spawn_site PORT_FILE COMMAND...: start COMMAND, a test web server that
# writes its port to PORT_FILE, in the background and wait (10 s at most)
# until it did; SITE is http://127.0.0.1:<the first port in the file>.
spawn_site() {
    local port_file=$1 port _
    shift
    "$@" &
    SITE_PIDS="$SITE_PIDS $!"
    for _ in $(seq 1 200); do [ -s "$port_file" ] && break; sleep 0.05; done
    [ -s "$port_file" ] || { echo "the test site did not start: $*" >&2; return 1; }
    read -r port _ <"$port_file" || true # no newline after the port
    SITE="http://127.0.0.1:$port"
}

# py_site [ARGS...] <<'EOF' ... EOF: serve a site of the test's own,
# whose Python code (on stdin) defines class H(Base) with do_GET.  Base is
# a quiet HTTP/1.1 http.server.BaseHTTPRequestHandler with send(ctype,
# body) for a 200 and not_found() for an empty 404; class H(Pages) with
# PAGES = {path: (content type, body)} serves a fixed set of pages; the server is threaded
# and ignores errors of connections the crawler closes early.  Run as
# `python3 $TMP/site.py PORT_FILE ARGS...` (sys.argv[2] is the first of
# ARGS); SITE as spawn_site sets it.
# shellcheck disable=SC2120 # ARGS are optional
py_site() {
    {
        cat <<'PY'
import http.server, os, socketserver, sys
class Base(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def send(self, ctype, body):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def not_found(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
class Pages(Base):
    # PAGES: path -> (content type, body as str or bytes)
    PAGES = {}
    def do_GET(self):
        p = self.PAGES.get(self.path)
        if p is None:
            return self.not_found()
        body = p[1] if isinstance(p[1], bytes) else p[1].encode("utf-8")
        self.send(p[0], body)
PY
        cat
        cat <<'PY'
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    def handle_error(self, *a):
        pass
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
    } >"$TMP/site.py"
    spawn_site "$TMP/site.port" python3 "$TMP/site.py" "$TMP/site.port" "$@"
}

# start_site NAME [web_site.py args...]: serve a generated site
# (tests/integration/web_site.py) with its access log in $TMP/NAME.log.
# SITE_<NAME> and SITE are its base URL, SITE_LOG its log.
start_site() {
    local name=$1
    shift
    spawn_site "$TMP/$name.port" python3 "$SRC/tests/integration/web_site.py" \
        --port-file "$TMP/$name.port" --log "$TMP/$name.log" "$@"
    printf -v "SITE_$name" '%s' "$SITE"
    SITE_LOG="$TMP/$name.log"
}

# site_expected SITE [web_site.py args...]: the URLs a crawl of a site
# served with those args indexes (web_site.py --expected), sorted.
site_expected() {
    local site=$1
    shift
    python3 "$SRC/tests/integration/web_site.py" --expected "$@" | sed "s|^|$site|" | LC_ALL=C sort
}

# requests PATH [NAME]: how often PATH was requested, from the access log
# of site NAME (default: the site started last).
requests() {
    local log=$SITE_LOG
    [ -z "${2:-}" ] || log="$TMP/$2.log"
    grep -c " $1\$" "$log" || true
}

# start_web_server [JQ_FILTER]: the server with import_config's
# configuration ($TMP/config.json, JQ_FILTER applied) on the data dir
# $TMP/data.
# shellcheck disable=SC2120 # the filter is optional
start_web_server() {
    import_config "$TMP/config.json" "${1:-.}"
    start_server --config "$TMP/config.json" --data-dir "$TMP/data"
}

# ---- crawl jobs
# web_params SITE SOURCE [JQ_FILTER]: the parameters of a crawl job of
# SITE: dataSource SOURCE, startUrl SITE/, records pushed to indexUpdate,
# urlPatterns including SITE/ only, politeness off (delayMs 0, 4
# connections per host); JQ_FILTER is applied to that object and may use
# $site, e.g. '.deltaImportStrategy = "full" | .filters.maxSize = 200000'.
web_params() {
    jq -cn --arg site "$1" --arg src "$2" \
        '{dataSource: $src, startUrl: ($site + "/"), jobToPushTo: "indexUpdate",
          filters: {urlPatterns: {include: ["^" + $site + "/"]}},
          politeness: {delayMs: 0, maxConnectionsPerHost: 4}} | '"${3:-.}"
}

# define_job NAME WORKFLOW PARAMETERS_JSON: POST the job definition; STATUS
# and BODY are the answer's (check them with expect_status).
define_job() {
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"$2\", \"parameters\": $3}"
}

# define_web NAME SITE SOURCE [JQ_FILTER]: a webCrawling job with the
# parameters of web_params; set-up: unless it is accepted the test stops.
define_web() {
    define_job "$1" webCrawling "$(web_params "$2" "$3" "${4:-.}")"
    [ "$STATUS" = 200 ] || { fail "define $1: $STATUS $(cat "$BODY")"; return 1; }
}

# start_standard JOB: a standard-mode run (STATUS as req leaves it), its id
# in RUN.
start_standard() {
    req POST "/smila/jobmanager/jobs/$1/" -d '{"mode": "standard"}'
    # shellcheck disable=SC2034 # for the test that sources this
    RUN=$(jq -r .jobId "$BODY")
}

# push_record JOB RECORD_JSON: push one record (a start URL) to the
# standard run of JOB; PUSHED counts the ones taken (202).  A refusal is a
# FAIL, and the status 1.
PUSHED=0
push_record() {
    req POST "/smila/job/$1/record" -d "$2"
    [ "$STATUS" = 202 ] || { fail "push $2: $STATUS $(cat "$BODY")"; return 1; }
    PUSHED=$((PUSHED + 1))
}

# poll TRIES SECONDS COMMAND...: run COMMAND until it succeeds, at most
# TRIES times, SECONDS apart; 1 if it never did.
poll() {
    local tries=$1 pause=$2 i
    shift 2
    for i in $(seq 1 "$tries"); do
        "$@" && return 0
        [ "$i" = "$tries" ] || sleep "$pause"
    done
    return 1
}

# ---- checks, one ok/fail line each
# expect_crawl JOB DESCRIPTION: `crawl JOB` (import_lib.sh) SUCCEEDED.
expect_crawl() {
    if crawl "$1"; then
        ok "$2"
    else
        fail "$2: run $(jq -r .state "$RUNJSON" 2>/dev/null || echo '?'): $(cat "$TMP/crawl.err")"
    fi
}

# expect_counter NAME OP VALUE DESCRIPTION: the last run's worker counter
# NAME (import_lib.sh counter) compares to VALUE: OP is = or a numeric
# test operator of [ (-ge, -le, ...).
expect_counter() {
    local got
    got=$(counter "$1") || true
    if test "$got" "$2" "$3" 2>/dev/null; then
        ok "$4"
    else
        fail "$4: $1 = $got, want $2 $3"
    fi
}

# expect_requests PATH OP N DESCRIPTION [NAME]: how often PATH was
# requested (requests PATH NAME) compares to N (OP as for expect_counter).
expect_requests() {
    local got
    got=$(requests "$1" "${5:-}")
    if test "$got" "$2" "$3" 2>/dev/null; then
        ok "$4"
    else
        fail "$4: $1 requested $got times, want $2 $3"
    fi
}

# expect_retry_gap NAME PATH SECONDS DESCRIPTION: site NAME's access log
# has PATH twice, the second request starting at least SECONDS after the
# first one ended (a Retry-After waited for).
expect_retry_gap() {
    if python3 - "$TMP/$1.log" "$2" "$3" <<'EOF'; then
import sys
rows = [l.split() for l in open(sys.argv[1])]
r = [(float(a), float(b)) for a, b, _, p in rows if p == sys.argv[2]]
print("requests of %s:" % sys.argv[2], len(r),
      ["%.2f" % (r[1][0] - r[0][1])] if len(r) == 2 else "")
sys.exit(0 if len(r) == 2 and r[1][0] - r[0][1] >= float(sys.argv[3]) else 1)
EOF
        ok "$4"
    else
        fail "$4"
    fi
}

# index_ids FILE: the ids of every document of index "default", sorted
# (LC_ALL=C), into FILE; the snapshot (id TAB textSha256) stays in
# $TMP/snap.
index_ids() {
    snapshot "$TMP/snap"
    ids "$TMP/snap" | LC_ALL=C sort >"$1"
}

# expect_index WANT DESCRIPTION: the index holds exactly the ids listed in
# the sorted file WANT.  Its ids are left in $TMP/got, the snapshot in
# $TMP/snap.
expect_index() {
    index_ids "$TMP/got"
    if diff "$1" "$TMP/got" >"$TMP/diff"; then
        ok "$2"
    else
        fail "$2: index ids differ: $(head -c 1200 "$TMP/diff")"
    fi
}

# search_hits WORD: `sluice search WORD`, its hits in $TMP/hits.
search_hits() {
    "$SLUICE" search --server "$BASE" "$1" >"$TMP/hits" 2>/dev/null
}

# expect_hit WORD URL DESCRIPTION: a search for WORD finds URL.
expect_hit() {
    search_hits "$1"
    if grep -qF "$2" "$TMP/hits"; then
        ok "$3"
    else
        fail "$3: search $1: $(cat "$TMP/hits")"
    fi
}
