#!/bin/bash
# bench/formats.sh: document formats benchmark.  Generates a corpus of N
# mixed documents from the committed test documents of tests/docs (PDF,
# DOCX, ODT, XLSX, EML, gzip'd Markdown, HTML, plain text; the text of
# every XML-based, text and mail document varied per copy, PDFs copied
# as they are), then measures in one run, on the same corpus:
#   - Sluice: a crawl job (workflow fileCrawling into indexUpdate, the
#     default configuration and converters) from the start request until
#     the index has caught up;
#   - recollindex (recollcmd) with its default configuration and filters.
# Prints for each: wall time, documents per second, documents that a
# search for a word every document holds finds (documents with text),
# peak RSS; and the ratios.  Target on 2 cores: at least as many
# documents with text as Recoll, at least 2x faster.  Not a test.
#   bench/formats.sh [--docs N] [--keep]
# Environment: SLUICE (default <repo>/build/sluice, a RelWithDebInfo
# build), TMPDIR.  Installs recollcmd with apt-get when missing (as root).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
SLUICE=${SLUICE:-$REPO/build/sluice}
N=2000
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
    --docs) N=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "formats.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$SLUICE" ] || { echo "formats.sh: no sluice binary at $SLUICE (make build)" >&2; exit 1; }
if ! command -v recollindex >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends recollcmd >/dev/null ||
        { echo "formats.sh: recollindex missing and apt-get install recollcmd failed" >&2; exit 1; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-formats.XXXXXX")
SERVER=""
cleanup() {
    [ -z "$SERVER" ] || { kill -TERM "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; }
    if [ "$KEEP" = 1 ]; then echo "kept: $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
cp "$SLUICE" "$TMP/sluice"
cp "$(dirname "$SLUICE")/sluice-pdf" "$TMP/sluice-pdf" # its PDF converter, found beside it

# ---------------------------------------------------------------- corpus
python3 - "$REPO/tests/docs" "$TMP/corpus" "$N" <<'PY'
"""Copies of the test documents, each with its own words where the format
lets a program change them (the XML of DOCX/ODT/XLSX, text, HTML, mail)."""
import gzip, os, random, sys, zipfile
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
random.seed(7)
WORDS = ("harbour gate tide heron pier kestrel osprey salt cargo dawn dusk "
         "lantern quay ferry anchor rope chart buoy mast keel").split()
def words(k):
    return " ".join(random.choice(WORDS) for _ in range(k))
def xml_copy(name, part, dst, i):
    with zipfile.ZipFile(os.path.join(src, name)) as z, \
         zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as w:
        for item in z.infolist():
            data = z.read(item.filename)
            if item.filename == part:
                data = data.replace(b"The quick sluice gate opens at dawn",
                                    ("The quick sluice gate %d %s" % (i, words(12))).encode())
            w.writestr(item, data)
def text(i):
    return "Sluice report %d\n\n%s\n" % (i, "\n".join(words(20) for _ in range(30)))
kinds = ["pdf", "docx", "odt", "xlsx", "eml", "md.gz", "html", "txt"]
for i in range(n):
    kind = kinds[i % len(kinds)]
    d = os.path.join(out, "d%02d" % (i % 50))
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, "doc%05d.%s" % (i, kind))
    if kind == "pdf":
        with open(os.path.join(src, "sample.pdf"), "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    elif kind == "docx":
        xml_copy("sample.docx", "word/document.xml", dst, i)
    elif kind == "odt":
        xml_copy("sample.odt", "content.xml", dst, i)
    elif kind == "xlsx":
        xml_copy("sample.xlsx", "xl/sharedStrings.xml", dst, i)
    elif kind == "eml":
        with open(os.path.join(src, "sample.eml"), "rb") as f:
            data = f.read().replace(b"Harbour Survey", ("Sluice note %d %s" % (i, words(8))).encode(), 1)
        with open(dst, "wb") as g:
            g.write(data)
    elif kind == "md.gz":
        with gzip.open(dst, "wt") as g:
            g.write(text(i))
    elif kind == "html":
        with open(dst, "w") as g:
            g.write("<html><head><title>Sluice %d</title></head><body><p>%s</p></body></html>"
                    % (i, text(i).replace("\n", "</p><p>")))
    else:
        with open(dst, "w") as g:
            g.write(text(i))
PY
NFILES=$(find "$TMP/corpus" -type f | wc -l)
echo "corpus: $NFILES documents ($(du -sh "$TMP/corpus" | cut -f1)) under $TMP/corpus: pdf docx odt xlsx eml md.gz html txt in turn"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# ---------------------------------------------------------------- sluice
(cd "$REPO" && exec "$TMP/sluice" serve --config config/sluice.json --listen 127.0.0.1:0 \
    --data-dir "$TMP/sluice-data") >"$TMP/sluice.log" 2>&1 &
SERVER=$!
B=$(bench_base "$TMP/sluice.log" "$SERVER")
bench_crawl_job "$B" benchFormats "$TMP/corpus"
idle() {
    local cur
    curl -sSf "$B/smila/bulkbuilder/" |
        jq -e '[.jobs[] | select(.openRecords != 0 or .pendingBulks != 0)] | length == 0' >/dev/null || return 1
    cur=$(curl -sSf "$B/smila/jobmanager/jobs/indexUpdate/" | jq -r '.runs.current // empty')
    [ -n "$cur" ] && curl -sSf "$B/smila/jobmanager/jobs/indexUpdate/$cur/" |
        jq -e '.workflowRuns.activeWorkflowRunCount == 0' >/dev/null
}
t0=$(now)
run=$(curl -sSf -X POST -H 'Content-Type: application/json' -d '{"mode":"runOnce"}' \
    "$B/smila/jobmanager/jobs/benchFormats/" | jq -r .jobId)
while ! curl -sSf "$B/smila/jobmanager/jobs/benchFormats/$run/" | jq -e '.state | test("SUCCEEDED|FAILED|CANCELED")' >/dev/null; do
    sleep 0.2
done
while ! { idle && sleep 0.3 && idle; }; do sleep 0.2; done
S_TIME=$(elapsed "$t0" "$(now)")
S_RSS=$(awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVER/status")
S_DOCS=$(curl -sSf "$B/smila/index/default/" | jq -r .documentCount)
S_TEXT=$(curl -sSf -G "$B/smila/index/default/search" --data-urlencode q=sluice --data-urlencode limit=1 | jq -r .total)
cur=$(curl -sSf "$B/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
curl -sSf "$B/smila/jobmanager/jobs/indexUpdate/$cur/" |
    jq -c '[.worker | to_entries[] | select(.key | endswith("_textExtractor")) | .value
        | with_entries(select(.key | test("converter|mime|records")))] | add' >"$TMP/textex.json"
kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""

# ---------------------------------------------------------------- recoll
mkdir -p "$TMP/recoll"
printf 'topdirs = %s\n' "$TMP/corpus" >"$TMP/recoll/recoll.conf"
read -r R_TIME R_RSS R_RC < <(python3 - "$TMP/recoll" <<'PY'
import resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(["recollindex", "-c", sys.argv[1]], stdout=subprocess.DEVNULL,
                     stderr=open(sys.argv[1] + "/index.log", "w"))
print("%.2f %.0f %d" % (time.perf_counter() - t,
                        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, rc))
PY
)
R_DOCS=$(sed -n 's/^dbtotdocs = //p' "$TMP/recoll/idxstatus.txt" 2>/dev/null || echo '?')
R_TEXT=$(recollq -c "$TMP/recoll" -S mtime -n 1 sluice 2>/dev/null | sed -n 's/^\([0-9]*\) results.*/\1/p' | head -1)
[ "$R_RC" = 0 ] || echo "recollindex exited $R_RC (log: $TMP/recoll/index.log, --keep)"

# ---------------------------------------------------------------- report
rate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t + 0 <= 0) print "-"; else printf "%.0f", n / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 <= 0) print "-"; else printf "%.2f", a / b }'; }
echo
printf '%-8s %8s %8s %10s %14s %8s\n' tool time_s docs/s documents "with_text" RSS_MiB
printf '%-8s %8s %8s %10s %14s %8s\n' sluice "$S_TIME" "$(rate "$NFILES" "$S_TIME")" "$S_DOCS" "$S_TEXT" "$S_RSS"
printf '%-8s %8s %8s %10s %14s %8s\n' recoll "$R_TIME" "$(rate "$NFILES" "$R_TIME")" "$R_DOCS" "${R_TEXT:-?}" "$R_RSS"
echo
echo "recoll time / sluice time: $(ratio "$R_TIME" "$S_TIME")  (target >= 2)"
echo "sluice with text / recoll with text: $(ratio "$S_TEXT" "${R_TEXT:-0}")  (target >= 1)"
echo "sluice textExtractor counters: $(cat "$TMP/textex.json")"
echo "documents counts differ in what they count: Sluice indexes every e-mail attachment as a document of its own"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
