#!/bin/bash
# Web import, politeness (issue 6): two hosts (two site servers on two
# ports), one crawl job starting at both, politeness.delayMs 250 and
# maxConnectionsPerHost 1.  From the servers' access logs:
# - per host, no two requests start closer than the delay (a few ms of
#   loopback jitter allowed) and none starts before the previous ended;
# - the hosts are crawled at the same time: while one host waits for its
#   delay the other one's requests go on (most of host B's requests fall
#   between host A's first and last request);
# - robots.txt's Crawl-delay raises one host's gap.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

DELAY=250
start_site A --pages 12
start_site B --pages 12
start_site C --pages 12 --crawl-delay 0.6

start_web_server

define() { # NAME SITE SOURCE [jq filter]: delayMs DELAY, one connection per host
    define_web "$1" "$2" "$3" ".filters.maxSize = 1048576 |
        .politeness = {delayMs: $DELAY, maxConnectionsPerHost: 1} | ${4:-.}"
}

# check_host NAME GAP_MS: gaps between starts and from the previous end
check_host() {
    python3 - "$TMP/$1.log" "$2" <<'EOF'
import sys
rows = sorted((float(a), float(b)) for a, b, *_ in (l.split() for l in open(sys.argv[1])))
gap = float(sys.argv[2]) / 1000.0
tol = 0.015
bad = []
for (s0, e0), (s1, e1) in zip(rows, rows[1:]):
    if s1 - s0 < gap - tol:
        bad.append("starts %.3f s apart" % (s1 - s0))
    if s1 < e0:
        bad.append("overlap: %.3f started before %.3f ended" % (s1, e0))
print("%d requests" % len(rows))
if bad:
    print("; ".join(bad[:5]))
    sys.exit(1)
EOF
}

define twoHosts "$SITE_A" web2 ".startUrl = [\"$SITE_A/\", \"$SITE_B/\"] |
    .filters.urlPatterns.include += [\"^$SITE_B/\"]"
t0=$(date +%s.%N)
expect_crawl twoHosts "crawl of two hosts SUCCEEDED"
t1=$(date +%s.%N)
for h in A B; do
    if out=$(check_host $h $DELAY); then
        ok "host $h: no two requests closer than ${DELAY} ms, never two at once ($out)"
    else
        fail "host $h: $out"
    fi
done
# both hosts at the same time
python3 - "$TMP/A.log" "$TMP/B.log" <<'EOF' && ok "while one host waits the other is crawled (requests interleave)" || fail "hosts were not crawled at the same time"
import sys
a = sorted(float(l.split()[0]) for l in open(sys.argv[1]))
b = sorted(float(l.split()[0]) for l in open(sys.argv[2]))
inside = sum(1 for t in b if a[0] <= t <= a[-1])
print("host B requests inside host A's crawl: %d of %d" % (inside, len(b)))
sys.exit(0 if inside >= len(b) // 2 else 1)
EOF
echo "# two hosts: $(wc -l <"$TMP/A.log") + $(wc -l <"$TMP/B.log") requests in $(echo "$t1 - $t0" | bc) s (information, not a check)"

# Crawl-delay 0.6 s of host C raises its gap above delayMs
define crawlDelay "$SITE_C" web3
expect_crawl crawlDelay "crawl of host C SUCCEEDED"
if out=$(check_host C 600); then
    ok "host C: robots.txt Crawl-delay 0.6 s is kept ($out)"
else
    fail "host C (Crawl-delay 0.6): $out"
fi

stop_server
finish
