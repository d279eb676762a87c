#!/bin/bash
# textExtractor: an HTML document of tags with nothing between them is not
# held whole.  libxml2 2.9.14's HTML push parser drops the input it has
# consumed only while it reads text, so a 48 MiB page of "<br><img>..."
# stayed in its buffer (up to maxContentBytes, 64 MiB a task); the
# extractor now drops it between chunks.  A file import of that page:
# - its words before and after 40 MiB of tags are searchable (nothing is
#   lost where the input is dropped);
# - the server's peak RSS grows by less than 24 MiB (48 MiB before).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

mkdir -p "$TMP/tree"
python3 - "$TMP/tree/tags.html" <<'PY'
import sys
tags = "<br><img src=x><b></b><i></i><span></span>" * 1000  # 42 KB
with open(sys.argv[1], "w") as f:
    f.write("<html><head><title>tags</title></head><body><p>alphaword</p>")
    for i in range(1000):                                    # 42 MB
        f.write(tags)
    f.write("<p>deepword</p>")
    for i in range(150):                                     # 6 MB more
        f.write(tags)
    f.write("</body></html>")
PY

# under AddressSanitizer freed memory waits in a quarantine (256 MiB) and
# counts in the RSS: keep it small, so the peak shows what is held
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
base_rss=$(server_peak_rss_kib)
define_crawl tags "$TMP/tree" tags
if crawl tags; then ok "import SUCCEEDED"; else fail "import: $(cat "$TMP/crawl.err")"; fi
wait_indexed
rss=$(server_peak_rss_kib)
for w in alphaword deepword; do
    "$SLUICE" search --server "$BASE" "$w" >"$TMP/hits" 2>/dev/null || true
    grep -q "tags.html" "$TMP/hits" && ok "'$w' is searchable" || fail "search $w: $(cat "$TMP/hits")"
done
echo "# peak RSS: $((base_rss / 1024)) MiB after start, $((rss / 1024)) MiB after the import"
[ "$rss" -lt $((base_rss + 24 * 1024)) ] &&
    ok "peak RSS grew by $(((rss - base_rss) / 1024)) MiB for a 48 MiB page of tags (less than 24)" ||
    fail "peak RSS grew by $(((rss - base_rss) / 1024)) MiB ($((rss / 1024)) MiB)"
stop_server
finish
