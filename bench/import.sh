#!/bin/bash
# bench/import.sh: file import benchmark.  Generates a deterministic tree of
# N files (nested folders, text/HTML/XML/markdown, ~2% zip and tar.gz
# archives, some with a nested zip, a few unicode names) and measures, in one
# run on that tree: the stat-only `find` baseline, then Sluice (crawl job
# fileCrawling -> processing job indexUpdate, until the index has caught up),
# omindex (xapian-omega) and recollindex (recollcmd), each for an initial
# import, a no-change re-import and a re-import after 1% of the files
# changed.  Prints times, files/s, peak RSS, every time as a ratio to find
# and to the peers, and the targets with PASS/MISS.  Not a test: a MISS does
# not fail the script.  Run `bench/import.sh --help` for the options.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/import.sh [--files N] [--peer-files K] [--seed S] [--runs R]
                       [--threads T] [--no-peers] [--full-only]
                       [--tree-cache DIR] [--summary FILE] [--perf FILE]
                       [--history-cost] [--metrics-cost] [--cold]
                       [--config-jq FILTER] [--keep] [--help]

File import benchmark: Sluice against find (stat-only baseline), omindex
(xapian-omega) and recollindex (recollcmd), all measured in this run on the
same generated tree.

  --files N       files in the generated tree (default 100000), archives
                  included (about 2% are zip / tar.gz)
  --peer-files K  omindex and recollindex index about 100-200 files/s here,
                  so when N > K (default 10000) they run on a sub-tree of
                  exactly K files (<tree>/d00), and Sluice runs its three
                  steps on that sub-tree too (a second server) so that the
                  ratios compare the same work; Sluice and find also run on
                  the whole tree
  --seed S        generator seed (default 42): same seed, same tree
  --runs R        measured runs of find and of each no-change re-import
                  (default 3, after a warm-up; median, min and max);
                  initial and 1%-changed imports change state, one run each
  --threads T     workers.threads of the server (default: the server's
                  own default, from the number of cores); repeat the
                  scaling measurement with 2, 4, 8, 16...
  --no-peers      skip omindex and recollindex
  --full-only     with --no-peers: no second server on the sub-tree
  --tree-cache DIR  generate the tree once into DIR (same file system as
                  TMPDIR) and reuse it: each run works on a hard-linked
                  copy (the 1% change replaces files, never writes into
                  them), so a 1M-file tree is generated once
  --perf FILE     record a profile of the full tree's server during its
                  initial import (perf record -F 499, no call graphs; read
                  it with perf report -i FILE --sort dso,sym)
  --perf-opts OPTS  perf record's options instead of "-F 499", e.g.
                  "-F 199 -g" for call graphs through frame pointers
  --history-cost  before the full tree's steps, one more server with the
                  per-document history off (jobmanager.history.
                  maxEntriesPerRun 0) imports the same tree; prints the
                  initial import with the history (the default) against
                  without it, and the jobmanager's LMDB size of each
  --metrics-cost  before the full tree's steps, one more server with the
                  metrics off (http.metrics 0) imports the same tree, and
                  the full tree's initial import is scraped (GET /metrics)
                  every second; prints the two initial imports side by side
  --cold          drop the page cache (sync; drop_caches 3; root only)
                  right before each server's initial import, so that runs
                  at sizes near the RAM start alike (the tree is read
                  from disk)
  --config-jq FILTER  a jq filter applied to the servers' configuration,
                  e.g. '.jobmanager.maxQueuedDownstream = 0'
  --mem-trace FILE  write the full tree's server memory over time to FILE:
                  a line "seconds anon_KiB file_KiB in_use_KiB free_KiB
                  mmap_KiB" every 5 s (RssAnon, RssFile; the allocator's
                  figures from /metrics), to tell a steady climb
                  from a late spike and live data from the allocator's
  --summary FILE  also write the full tree's figures as "key value" lines
                  (bench/scale.sh reads them)
  --keep          keep the temporary directory (tree, data dirs, logs)
  -h, --help      this text

Environment: SLUICE (default <repo>/build/sluice; use a Release or
RelWithDebInfo build), TMPDIR (where the temporary directory goes).

Steps: (1) find TREE -type f -printf '%s %T@\n' >/dev/null, one warm-up and R
measured runs (warm page cache); (2) a fresh `sluice serve` (own data dir, a
free port, started from the repo root so config/jobs.json and workflows/ are
loaded) gets a crawl job benchCrawl (workflow fileCrawling, jobToPushTo
indexUpdate); each import is a runOnce run; the time runs from the start
request until the crawl run has ended AND the bulkbuilder has no open records
or pending bulks AND the current indexUpdate run has no active workflow run
(seen twice, 300 ms apart; the time is taken at the first sighting); then the
index document count is compared with the count expected from the tree
(regular files + non-directory archive entries, nested archives recursively),
and VmHWM of the server is read, with the peaks of its anonymous and
file-backed resident memory (RssAnon, RssFile of /proc/PID/status, sampled
every 200 ms since the start: the LMDB and SQLite maps are file-backed,
page cache the kernel can take back); (3) omindex --db DB --url / TREE (with .md
as text/plain and .xml as text/html, which it skips by default) and
recollindex -c CONFDIR (topdirs = TREE, noaspell), re-run for the re-imports;
(4) the 1% change: 0.5% of the files (not archives) get a line appended
(mtime now), 0.25% new files are added, 0.25% of the files are deleted.
Needs bash, python3, curl, jq, find; installs xapian-omega and recollcmd with
apt-get when missing (as root), and says so when that is not possible.
EOF
}

FILES=100000
PEER_FILES=10000
SEED=42
RUNS=3
PEERS=1
THREADS=""
KEEP=0
FULL_ONLY=0
TREE_CACHE=""
SUMMARY=""
MEM_TRACE=""
PERF=""
PERF_OPTS="-F 499"
HISTORY_COST=0
METRICS_COST=0
COLD=0
CONFIG_JQ=.
while [ $# -gt 0 ]; do
    case $1 in
    --files) FILES=${2:?--files needs a value}; shift 2 ;;
    --peer-files) PEER_FILES=${2:?--peer-files needs a value}; shift 2 ;;
    --seed) SEED=${2:?--seed needs a value}; shift 2 ;;
    --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
    --threads) THREADS=${2:?--threads needs a value}; shift 2 ;;
    --no-peers) PEERS=0; shift ;;
    --keep) KEEP=1; shift ;;
    --mem-trace) MEM_TRACE=${2:?--mem-trace needs a file}; shift 2 ;;
    --full-only) FULL_ONLY=1; shift ;;
    --tree-cache) TREE_CACHE=${2:?--tree-cache needs a directory}; shift 2 ;;
    --summary) SUMMARY=${2:?--summary needs a file}; shift 2 ;;
    --perf) PERF=${2:?--perf needs a file}; shift 2 ;;
    --perf-opts) PERF_OPTS=${2:?--perf-opts needs options}; shift 2 ;;
    --history-cost) HISTORY_COST=1; shift ;;
    --metrics-cost) METRICS_COST=1; shift ;;
    --cold) COLD=1; shift ;;
    --config-jq) CONFIG_JQ=${2:?--config-jq needs a jq filter}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "import.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for v in FILES PEER_FILES SEED RUNS; do
    case ${!v} in '' | *[!0-9]*) echo "import.sh: ${v,,} must be a number" >&2; exit 2 ;; esac
done
case $THREADS in *[!0-9]*) echo "import.sh: threads must be a number" >&2; exit 2 ;; esac
if [ "$FILES" -lt 100 ] || [ "$RUNS" -lt 1 ] || [ "$PEER_FILES" -lt 100 ]; then
    echo "import.sh: need --files >= 100, --peer-files >= 100, --runs >= 1" >&2
    exit 2
fi

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
SLUICE=${SLUICE:-$REPO/build/sluice}
if [ ! -x "$SLUICE" ]; then
    echo "import.sh: $SLUICE not found: build it first (make build) or set SLUICE" >&2
    exit 2
fi
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")

# ---------------------------------------------------------------- tools
apt_install() { # PACKAGE...: install when root and apt-get exists; 0 on success
    [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || return 1
    echo "import.sh: apt-get install -y $*" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=120 "$@" >"${TMPDIR:-/tmp}/import-apt.$$.log" 2>&1 || {
        # the package lists may be missing or stale: update once and retry
        DEBIAN_FRONTEND=noninteractive apt-get update -q >>"${TMPDIR:-/tmp}/import-apt.$$.log" 2>&1 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                -o DPkg::Lock::Timeout=120 "$@" >>"${TMPDIR:-/tmp}/import-apt.$$.log" 2>&1
    } || { tail -3 "${TMPDIR:-/tmp}/import-apt.$$.log" >&2; rm -f "${TMPDIR:-/tmp}/import-apt.$$.log"; return 1; }
    rm -f "${TMPDIR:-/tmp}/import-apt.$$.log"
}
for t in python3:python3 curl:curl jq:jq find:findutils; do
    if ! command -v "${t%%:*}" >/dev/null; then
        apt_install "${t#*:}" || { echo "import.sh: ${t%%:*} is missing and could not be installed" >&2; exit 2; }
    fi
done
HAVE_OMINDEX=0
HAVE_RECOLL=0
NO_OMINDEX="skipped (--no-peers)"
NO_RECOLL="skipped (--no-peers)"
if [ "$PEERS" -eq 1 ]; then
    if command -v omindex >/dev/null || apt_install xapian-omega; then
        HAVE_OMINDEX=1
    else
        NO_OMINDEX="NOT AVAILABLE: omindex missing and 'apt-get install xapian-omega' failed (no network or not root?)"
    fi
    if command -v recollindex >/dev/null || apt_install recollcmd; then
        HAVE_RECOLL=1
    else
        NO_RECOLL="NOT AVAILABLE: recollindex missing and 'apt-get install recollcmd' failed (no network or not root?)"
    fi
    [ "$HAVE_OMINDEX" -eq 1 ] || echo "import.sh: omindex $NO_OMINDEX" >&2
    [ "$HAVE_RECOLL" -eq 1 ] || echo "import.sh: recollindex $NO_RECOLL" >&2
fi

# ---------------------------------------------------------------- temp, cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-import.XXXXXX")
TREE=$TMP/tree
# a private copy: a rebuild of build/ during the run cannot mix two binaries
cp "$SLUICE" "$TMP/sluice"
cp "$(dirname "$SLUICE")/sluice-pdf" "$TMP/sluice-pdf" # its PDF converter, found beside it
SERVERS=()
SAMPLERS=()
cleanup() {
    local pid
    for pid in "${SAMPLERS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${SERVERS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${SERVERS[@]}"; do
        # a server that does not stop within 30 s is killed
        for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [ "$KEEP" -eq 1 ]; then
        echo "kept: $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- python helpers
cat >"$TMP/gen.py" <<'PYEOF'
"""gen.py: tree generator, counter, 1% changer and process measurer of
bench/import.sh.  Deterministic for a given seed (file mtimes aside)."""
import gzip
import io
import os
import random
import resource
import subprocess
import sys
import tarfile
import time
import zipfile

ARCHIVE_EXT = (".zip", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz",
               ".7z", ".jar", ".cpio", ".iso")
UNICODE_STEMS = ["Überblick", "résumé", "naïve café", "日本語の文書", "Ελληνικά",
                 "Привет мир", "mañana", "Größe", "coöperation", "北京 notes",
                 "emoji 🚀 plan", "Ærøskøbing"]
UNICODE_WORDS = ["café", "naïve", "straße", "Größe", "東京", "Ελλάδα", "déjà",
                 "Zürich", "smörgåsbord", "niño"]
FIXED_MTIME = 1700000000  # archive entries: fixed, so archives are byte-equal


def is_archive(name):
    n = name.lower()
    return any(n.endswith(e) for e in ARCHIVE_EXT)


class Text:
    """A pool of pseudo-words with a Zipf-like distribution, and a base text
    that file contents are sliced from."""

    def __init__(self, rnd):
        cons = "bcdfghjklmnprstvwz"
        vow = "aeiou"
        words = set()
        while len(words) < 30000:
            n = rnd.choice((1, 2, 2, 3, 3, 4))
            words.add("".join(rnd.choice(cons) + rnd.choice(vow)
                              + (rnd.choice(cons) if rnd.random() < 0.3 else "")
                              for _ in range(n)))
        words = sorted(words)
        rnd.shuffle(words)
        words[100:100] = UNICODE_WORDS
        cum, acc = [], 0.0
        for i in range(len(words)):
            acc += 1.0 / (i + 10)
            cum.append(acc)
        out = []
        size = 0
        while size < 4_500_000:
            sent = rnd.choices(words, cum_weights=cum, k=rnd.randint(6, 24))
            s = " ".join(sent).capitalize() + "."
            out.append(s)
            size += len(s) + 1
            if rnd.random() < 0.15:
                out.append("\n")
        self.base = " ".join(out).replace(" \n ", "\n")
        self.words = words

    def slice(self, rnd, n):
        n = min(n, len(self.base) - 1)
        off = rnd.randrange(0, len(self.base) - n)
        return self.base[off:off + n]

    def title(self, rnd):
        return " ".join(rnd.choices(self.words[:3000], k=rnd.randint(2, 6))).title()


def size_of(rnd):
    r = rnd.random()
    if r < 0.97:  # most: 1-20 KiB, log-uniform
        return int(1024 * 20 ** rnd.random())
    if r < 0.995:  # some: 20-200 KiB
        return int(20 * 1024 * 10 ** rnd.random())
    return int(200 * 1024 * 10 ** rnd.random())  # a few: 200 KiB - 2 MiB


def content(rnd, text, kind, n):
    t = text.title(rnd)
    body = text.slice(rnd, n)
    if kind == "txt":
        return body + "\n"
    if kind == "md":
        paras = body.split("\n")
        out = ["# " + t, ""]
        for i, p in enumerate(paras):
            if i and i % 3 == 0:
                out += ["## " + text.title(rnd), ""]
            out += ["- " + p if i % 5 == 4 else p, ""]
        return "\n".join(out)
    if kind == "html":
        return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + t
                + "</title>\n<style>p { margin: 0 }</style></head>\n<body><h1>" + t
                + "</h1>\n<p>" + body.replace("\n", "</p>\n<p>") + "</p>\n</body></html>\n")
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doc><title>" + t
            + "</title><body>\n<para>" + body.replace("\n", "</para>\n<para>")
            + "</para>\n</body></doc>\n")


KINDS = ["txt", "html", "xml", "md"]
KIND_W = [30, 30, 15, 25]


def member(rnd, text):
    kind = rnd.choices(KINDS, KIND_W)[0]
    n = int(1024 * 20 ** rnd.random())
    return kind, content(rnd, text, kind, n).encode()


def make_zip(rnd, text, nmembers):
    bio = io.BytesIO()
    dirs = ["", "docs/", "docs/old/", "misc/"]
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
        if rnd.random() < 0.5:  # explicit directory entries in half of them
            for d in dirs[1:]:
                z.writestr(zipfile.ZipInfo(d, (2023, 11, 14, 22, 13, 20)), b"")
        for i in range(nmembers):
            kind, data = member(rnd, text)
            zi = zipfile.ZipInfo("%sm%03d.%s" % (rnd.choice(dirs), i, kind),
                                 (2023, 11, 14, 22, 13, 20))
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return bio.getvalue()


def make_targz(rnd, text, nmembers, nested):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
        for d in ("data", "data/sub"):
            ti = tarfile.TarInfo(d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            ti.mtime = FIXED_MTIME
            t.addfile(ti)
        items = []
        for i in range(nmembers):
            kind, data = member(rnd, text)
            items.append(("data/%sm%03d.%s" % (rnd.choice(["", "sub/"]), i, kind), data))
        if nested:
            items.append(("data/inner.zip", make_zip(rnd, text, rnd.randint(5, 15))))
        for name, data in items:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            ti.mtime = FIXED_MTIME
            t.addfile(ti, io.BytesIO(data))
    # gzip outside tarfile, whose gzip header would carry the current time
    return gzip.compress(bio.getvalue(), compresslevel=6, mtime=FIXED_MTIME)


def plan_dirs(rnd, path, nfiles, depth, out):
    """Split nfiles over path and nested sub-directories: fan-out 10-20,
    depth at most 4 below the top-level directory, ~10-60 files a folder."""
    if nfiles <= 60 or depth >= 4:
        out.append((path, nfiles))
        return
    here = min(nfiles // 20, rnd.randint(5, 30))
    out.append((path, here))
    rest = nfiles - here
    fan = rnd.randint(10, 20)
    w = [rnd.random() + 0.5 for _ in range(fan)]
    tot = sum(w)
    counts = [int(rest * x / tot) for x in w]
    counts[0] += rest - sum(counts)
    for i, c in enumerate(counts):
        name = "s%02d" % i
        if depth == 1 and i == fan - 1:
            name = rnd.choice(["Ordner-ä", "文件夹", "dossier é"])  # unicode folders
        plan_dirs(rnd, os.path.join(path, name), c, depth + 1, out)


def gen(root, nfiles, seed, subset):
    rnd = random.Random(seed)
    text = Text(rnd)
    tops = []
    if nfiles > subset:
        tops.append(subset)
        rest = nfiles - subset
        ntop = max(9, -(-rest // subset))
    else:
        rest = nfiles
        ntop = 10
    base, extra = divmod(rest, ntop)
    tops += [base + (1 if i < extra else 0) for i in range(ntop)]
    layout = []
    for i, c in enumerate(tops):
        plan_dirs(rnd, os.path.join(root, "d%02d" % i), c, 1, layout)
    made = nbytes = narch = 0
    for path, c in layout:
        os.makedirs(path, exist_ok=True)
        for j in range(c):
            r = rnd.random()
            if r < 0.012:
                name, data = "a%04d.zip" % j, make_zip(rnd, text, rnd.randint(10, 50))
                narch += 1
            elif r < 0.02:
                name = "a%04d.tar.gz" % j
                data = make_targz(rnd, text, rnd.randint(10, 50), rnd.random() < 0.3)
                narch += 1
            else:
                kind = rnd.choices(KINDS, KIND_W)[0]
                stem = "f%04d" % j
                if rnd.random() < 0.003:
                    stem = "%s %04d" % (rnd.choice(UNICODE_STEMS), j)
                name = "%s.%s" % (stem, kind)
                data = content(rnd, text, kind, size_of(rnd)).encode()
            with open(os.path.join(path, name), "wb") as f:
                f.write(data)
            made += 1
            nbytes += len(data)
    print("%d %d %d %d" % (made, nbytes, narch, len(layout)))


def entries(data, name):
    """Non-directory entries of an archive, nested archives recursively."""
    n = 0
    if name.lower().endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for zi in z.infolist():
                if zi.is_dir():
                    continue
                n += 1
                if is_archive(zi.filename):
                    n += entries(z.read(zi), zi.filename)
        return n
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for ti in t:
            if not ti.isfile():
                continue
            n += 1
            if is_archive(ti.name):
                n += entries(t.extractfile(ti).read(), ti.name)
    return n


def count(root):
    files = nbytes = narch = nent = 0
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            files += 1
            nbytes += os.path.getsize(p)
            if is_archive(f):
                narch += 1
                with open(p, "rb") as fh:
                    nent += entries(fh.read(), f)
    print("%d %d %d %d" % (files, nbytes, narch, nent))


def change(root, seed, subset_root):
    """Modify 0.5% (append, mtime now; archives excluded), add 0.25%,
    delete 0.25% of the files; print the counts, overall and in subset_root."""
    rnd = random.Random(seed * 7919 + 1)
    text = Text(random.Random(seed))
    allf = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    n = len(allf)
    nmod, nadd, ndel = round(n * 0.005), round(n * 0.0025), round(n * 0.0025)
    pick = rnd.sample(range(n), nmod + ndel + 4 * nmod)
    dele = [allf[i] for i in pick[:ndel]]
    mod = [allf[i] for i in pick[ndel:] if not is_archive(allf[i])][:nmod]
    dirs = sorted({os.path.dirname(allf[i]) for i in rnd.sample(range(n), nadd)})
    add = []
    for i in range(nadd):
        add.append(os.path.join(dirs[i % len(dirs)], "added%05d.txt" % i))
    now = time.time()
    for p in mod:
        extra = text.slice(rnd, rnd.randint(50, 400))
        if p.endswith(".xml"):  # still well-formed: a comment after the root
            extra = "<!-- " + extra + " -->"
        # a new file renamed over the old one: a hard-linked copy of a
        # cached tree (--tree-cache) is never written into
        with open(p, "rb") as f:
            data = f.read()
        with open(p + ".change-tmp", "wb") as f:
            f.write(data + ("\n" + extra + "\n").encode())
        os.rename(p + ".change-tmp", p)
        os.utime(p, (now, now))
    for p in add:
        with open(p, "wb") as f:
            f.write(content(rnd, text, "txt", size_of(rnd)).encode())
    for p in dele:
        os.unlink(p)
    sub = subset_root.rstrip("/") + "/"
    insub = lambda ps: sum(1 for p in ps if p.startswith(sub))
    print("%d %d %d %d %d %d" % (len(mod), len(add), len(dele),
                                 insub(mod), insub(add), insub(dele)))


def measure(log, argv):
    """Run argv with output to log; print wall seconds, peak RSS (KiB) of
    the largest process it waited for, exit code."""
    with open(log, "ab") as out:
        t = time.perf_counter()
        rc = subprocess.call(argv, stdout=out, stderr=subprocess.STDOUT)
        el = time.perf_counter() - t
    print("%.6f %d %d" % (el, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "count":
        count(sys.argv[2])
    elif cmd == "change":
        change(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "measure":
        measure(sys.argv[2], sys.argv[3:])
PYEOF
py() { python3 "$TMP/gen.py" "$@"; }

# ---------------------------------------------------------------- helpers
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
# stats: seconds on stdin -> "median min max"
stats() { sort -g | awk '{ a[NR] = $1 } END { printf "%.6f %.6f %.6f\n", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
# secs: seconds for printing, 4 decimals
secs() { awk -v t="$1" 'BEGIN { printf "%.4f", t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 <= 0) print "-"; else printf "%.2f", a / b }'; }
mib() { if [ -z "$1" ]; then echo -; else awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; fi; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t + 0 <= 0) print "-"; else printf "%.0f", n / t }'; }
warn() { printf 'WARNING: %s\n' "$*"; }

# set_stats KEY SECONDS...: T[KEY] = median, SPREAD[KEY] = min-max
set_stats() {
    local k=$1 med lo hi
    shift
    read -r med lo hi < <(printf '%s\n' "$@" | stats)
    T[$k]=$med
    SPREAD[$k]="$lo-$hi"
}
spread() { local lo=${SPREAD[$1]%-*} hi=${SPREAD[$1]#*-}; echo "$(secs "$lo")-$(secs "$hi")"; }
# Results, keyed "tool.scope.step": time (median for nochange), extra text.
declare -A T TC RSS DOCS SPREAD WCHAR
# The scopes: "full" (the whole tree) and, when N > K, "sub" (<tree>/d00).
declare -A ROOT NFILES EXPECT

# ---------------------------------------------------------------- machine
disk_info() {
    local src dev rota model
    src=$(findmnt -n -o SOURCE,FSTYPE -T "$TMP" 2>/dev/null | head -1 || true)
    dev=$(findmnt -n -o SOURCE -T "$TMP" 2>/dev/null | head -1 || true)
    dev=$(basename "${dev%%[*}")
    dev=$(lsblk -n -o PKNAME "/dev/$dev" 2>/dev/null | head -1 || true)
    [ -n "$dev" ] || dev=$(basename "$(findmnt -n -o SOURCE -T "$TMP" 2>/dev/null | head -1)")
    rota=$(cat "/sys/block/$dev/queue/rotational" 2>/dev/null || echo "?")
    model=$({ tr -s ' ' <"/sys/block/$dev/device/model"; } 2>/dev/null || true)
    case $rota in 0) rota="non-rotational" ;; 1) rota="rotational (as the kernel reports; a VM disk often says so)" ;; *) rota="type unknown" ;; esac
    echo "$src on $dev${model:+ ($model)}, $rota"
}

echo "bench/import.sh: file import, $FILES files, seed $SEED, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: nproc $(nproc), CPU \"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)\", RAM $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
echo "disk: $(disk_info)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every time; the ratios are only as good as the quiet)"
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+local changes"; fi
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$(dirname "$SLUICE")/CMakeCache.txt" 2>/dev/null || true)
echo "sluice: $SLUICE (build type ${btype:-unknown}, binary from $(date -u -r "$SLUICE" +%Y-%m-%dT%H:%M:%SZ)), checkout at commit $commit"
[ "$CONFIG_JQ" = . ] || echo "server configuration changed by: jq '$CONFIG_JQ'"
[ "$COLD" -eq 0 ] || echo "page cache dropped before each initial import (--cold)"
case $btype in Release | RelWithDebInfo) ;; *) warn "sluice is not a Release/RelWithDebInfo build: times are not comparable" ;; esac
[ "$HAVE_OMINDEX" -eq 1 ] && echo "omindex: $(omindex --version 2>&1 | head -1)" || echo "omindex: $NO_OMINDEX"
[ "$HAVE_RECOLL" -eq 1 ] && echo "recollindex: recollcmd $(dpkg-query -W -f='${Version}' recollcmd 2>/dev/null || echo '(version unknown)')" || echo "recollindex: $NO_RECOLL"

# ---------------------------------------------------------------- tree
t0=$(now)
if [ -n "$TREE_CACHE" ]; then
    cached=$(mkdir -p "$TREE_CACHE" && cd "$TREE_CACHE" && pwd)/tree-$FILES-$SEED-$PEER_FILES
    if [ ! -f "$cached.stats" ]; then
        rm -rf "$cached"
        py gen "$cached" "$FILES" "$SEED" "$PEER_FILES" >"$cached.stats.tmp"
        mv "$cached.stats.tmp" "$cached.stats"
        made="generated into $cached in $(secs "$(elapsed "$t0" "$(now)")") s"
    else
        made="generated before into $cached"
    fi
    t0=$(now)
    cp -al "$cached" "$TREE" || { echo "import.sh: cp -al $cached: the cache must be on the file system of TMPDIR" >&2; exit 2; }
    read -r gfiles gbytes garch gdirs <"$cached.stats"
    made="$made; hard-linked under $TMP in $(secs "$(elapsed "$t0" "$(now)")") s"
else
    read -r gfiles gbytes garch gdirs < <(py gen "$TREE" "$FILES" "$SEED" "$PEER_FILES")
    made="generated in $(secs "$(elapsed "$t0" "$(now)")") s under $TMP"
fi
echo "tree: $gfiles files in $gdirs folders, $((gbytes / 1048576)) MiB, $garch archives (zip, tar.gz, some tar.gz with a nested zip); $made"
SCOPES=(full)
ROOT[full]=$TREE
if [ "$FILES" -gt "$PEER_FILES" ] && ! { [ "$FULL_ONLY" -eq 1 ] && [ "$PEERS" -eq 0 ]; }; then
    SCOPES+=(sub)
    ROOT[sub]=$TREE/d00
fi
PEER_SCOPE=${SCOPES[-1]}
expect() { # SCOPE: set NFILES and EXPECT from the tree as it is now
    local f b a e
    read -r f b a e < <(py count "${ROOT[$1]}")
    NFILES[$1]=$f
    EXPECT[$1]=$((f + e))
    echo "  $1 (${ROOT[$1]#"$TMP"/}): $f files, $((b / 1048576)) MiB, $a archives with $e entries (not directories, nested counted): expect $((f + e)) documents"
}
echo "expected index documents = regular files + archive entries:"
for s in "${SCOPES[@]}"; do expect "$s"; done
if [ "$PEER_SCOPE" = sub ]; then
    echo "omindex and recollindex (~100-200 files/s) run on the sub-tree d00 of ${NFILES[sub]} files, and so does a second Sluice server; Sluice and find also run on the whole tree"
fi

# ---------------------------------------------------------------- find
run_find() { # SCOPE
    local r out=()
    py measure /dev/null find "${ROOT[$1]}" -type f -printf '%s %T@\n' >/dev/null # warm-up
    for r in $(seq 1 "$RUNS"); do
        out+=("$(py measure /dev/null find "${ROOT[$1]}" -type f -printf '%s %T@\n' | cut -d' ' -f1)")
    done
    set_stats "find.$1" "${out[@]}"
}
for s in "${SCOPES[@]}"; do run_find "$s"; done

# ---------------------------------------------------------------- sluice
declare -A SPID SBASE SLOG SDATA ANON FILEB

# heap_sampler PID BASE OUT: every 5 s, the allocator's "in_use free mmap"
# KiB from BASE/metrics into OUT, until PID is gone; a scrape that fails
# ("- - -") leaves the last line.
heap_sampler() {
    local pid=$1 base=$2 dest=$3 heap
    while kill -0 "$pid" 2>/dev/null; do
        heap=$(bench_malloc "$base")
        [ "$heap" = "- - -" ] || ! kill -0 "$pid" 2>/dev/null || echo "$heap" >"$dest"
        sleep 5
    done
}

# store_sampler PID DIR OUT: every 2 s, the peak so far of the KiB under
# DIR (the temporary store: the bulks a crawl holds) into OUT, until PID
# is gone.  du walks a few thousand bulk files at most.
store_sampler() {
    local pid=$1 dir=$2 dest=$3 kib peak=0
    while kill -0 "$pid" 2>/dev/null; do
        # (|| : set -e would end the sampler while DIR does not exist)
        kib=$(du -sk "$dir" 2>/dev/null | cut -f1) || :
        if [ -n "$kib" ] && [ "$kib" -gt "$peak" ]; then
            peak=$kib
            echo "$peak" >"$dest"
        fi
        sleep 2
    done
}

start_server() { # SCOPE
    local s=$1 pid
    SDATA[$s]=$TMP/sluice-$s
    SLOG[$s]=$TMP/sluice-$s.log
    # from the repo root: config/jobs.json and workflows/ are loaded
    # definitions and workflows: the repository's (the copy has none beside it)
    jq --arg t "${THREADS:-}" --arg s "$s" --arg repo "$REPO" '.jobmanager.configDir = $repo + "/config" |
        .jobmanager.workflowsDir = $repo + "/workflows" |
        if $t == "" then . else .workers.threads = ($t | tonumber) end |
        if $s == "nohist" then .jobmanager.history.maxEntriesPerRun = 0 else . end |
        if $s == "nometrics" then .http.metrics = 0 else . end' \
        "$REPO/config/sluice.json" | jq "$CONFIG_JQ" >"$TMP/sluice-$s.json"
    (cd "$REPO" && exec "$TMP/sluice" serve --config "$TMP/sluice-$s.json" --listen 127.0.0.1:0 \
        --data-dir "${SDATA[$s]}" --log-level info) >"${SLOG[$s]}" 2>&1 &
    pid=$!
    SERVERS+=("$pid")
    SPID[$s]=$pid
    echo "0 0" >"$TMP/mem-$s"
    local trace=""
    if [ -n "$MEM_TRACE" ] && [ "$s" = full ]; then
        trace=$MEM_TRACE
        : >"$trace"
    fi
    bench_peak_sampler "$pid" "$TMP/mem-$s" "$trace" &
    SAMPLERS+=("$!")
    echo 0 >"$TMP/store-$s"
    store_sampler "$pid" "${SDATA[$s]}/store/temp" "$TMP/store-$s" &
    SAMPLERS+=("$!")
    SBASE[$s]=$(bench_base "${SLOG[$s]}" "$pid") || exit 1
    if [ -n "$trace" ]; then
        heap_sampler "$pid" "${SBASE[$s]}" "$TMP/mem-$s.heap" &
        SAMPLERS+=("$!")
    fi
    bench_crawl_job "${SBASE[$s]}" benchCrawl "${ROOT[$s]}"
}

# poll_sleep: backs off from 20 ms to 250 ms so that short steps are timed
# finely and long ones are not slowed down by the polling itself.
POLL_MS=20
poll_reset() { POLL_MS=20; }
poll_sleep() {
    local s
    printf -v s '%d.%03d' $((POLL_MS / 1000)) $((POLL_MS % 1000))
    sleep "$s"
    POLL_MS=$((POLL_MS * 3 / 2 > 250 ? 250 : POLL_MS * 3 / 2))
}

idle() { # BASE: 0 when the bulkbuilder is empty and indexUpdate has no active workflow run
    local b=$1 cur
    curl -sSf "$b/smila/bulkbuilder/" |
        jq -e '[.jobs[] | select(.openRecords != 0 or .pendingBulks != 0)] | length == 0' >/dev/null || return 1
    cur=$(curl -sSf "$b/smila/jobmanager/jobs/indexUpdate/" | jq -r '.runs.current // empty')
    [ -n "$cur" ] || return 1
    curl -sSf "$b/smila/jobmanager/jobs/indexUpdate/$cur/" |
        jq -e '.workflowRuns.activeWorkflowRunCount == 0' >/dev/null
}

alive() { # SCOPE: exit with the log's tail when the server died
    kill -0 "${SPID[$1]}" 2>/dev/null && return 0
    echo "import.sh: the sluice server ($1 tree) died; the end of its log:" >&2
    tail -20 "${SLOG[$1]}" >&2
    exit 1
}

sluice_step() { # SCOPE STEP: one import; sets T, RSS, DOCS
    local s=$1 step=$2 b=${SBASE[$1]} t0 t1 run state docs cur ended
    local perf_pid=""
    if [ -n "$PERF" ] && [ "$s" = full ] && [ "$step" = initial ]; then
        # shellcheck disable=SC2086 # PERF_OPTS is a list of options
        perf record -q $PERF_OPTS -p "${SPID[$s]}" -o "$PERF" >/dev/null 2>&1 &
        perf_pid=$!
    fi
    local io0
    io0=$(awk '$1 == "wchar:" { print $2 }' "/proc/${SPID[$s]}/io")
    t0=$(now)
    run=$(curl -sSf -X POST -H 'Content-Type: application/json' -d '{"mode":"runOnce"}' \
        "$b/smila/jobmanager/jobs/benchCrawl/" | jq -r .jobId)
    poll_reset
    while :; do
        # one curl per poll, the state read by bash: jq and tee cost a
        # few ms of CPU per poll, taken from the two cores being measured
        curl -sSf -o "$TMP/crawl-$s-$step.json" "$b/smila/jobmanager/jobs/benchCrawl/$run/"
        state=unknown
        [[ $(<"$TMP/crawl-$s-$step.json") =~ \"state\":\"([A-Z]+)\" ]] && state=${BASH_REMATCH[1]}
        case $state in SUCCEEDED | FAILED | CANCELED) break ;; esac
        alive "$s"
        poll_sleep
    done
    TC[sluice.$s.$step]=$(elapsed "$t0" "$(now)")
    [ "$state" = SUCCEEDED ] || warn "sluice $s $step: crawl run $run ended $state: $(jq -c .errors "$TMP/crawl-$s-$step.json")"
    # A run that pushed nothing gives the processing job nothing to do:
    # the step ends with the crawl run, and the server's endTime says when
    # (the polling above overshoots by up to 250 ms plus its curl and jq).
    ended=$(jq -r 'if ([.worker[] | .["records.pushed"] // 0, .["records.deleted"] // 0] | add // 0) == 0
        then .endTime else empty end' "$TMP/crawl-$s-$step.json")
    poll_reset
    while :; do
        if idle "$b"; then
            t1=$(now)
            sleep 0.3
            idle "$b" && break
        fi
        alive "$s"
        poll_sleep
    done
    if [ -n "$ended" ]; then
        t1=$(date -d "$ended" +%s.%N)
        TC[sluice.$s.$step]=$(elapsed "$t0" "$t1")
    fi
    T[sluice.$s.$step]=$(elapsed "$t0" "$t1")
    # bytes the server wrote (write(2) and friends, page cache included)
    WCHAR[sluice.$s.$step]=$(($(awk '$1 == "wchar:" { print $2 }' "/proc/${SPID[$s]}/io") - io0))
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid" 2>/dev/null || true
        wait "$perf_pid" 2>/dev/null || true
        echo "profile of the initial import: perf report -i $PERF --sort dso,sym"
    fi
    cur=$(curl -sSf "$b/smila/jobmanager/jobs/indexUpdate/" | jq -r '.runs.current // empty')
    curl -sSf "$b/smila/jobmanager/jobs/indexUpdate/$cur/" >"$TMP/index-$s-$step.json" || true
    RSS[sluice.$s.$step]=$(awk '/^VmHWM/ { print $2 }' "/proc/${SPID[$s]}/status")
    read -r "ANON[sluice.$s.$step]" "FILEB[sluice.$s.$step]" <"$TMP/mem-$s"
    docs=$(curl -sSf "$b/smila/index/default/" | jq -r .documentCount)
    DOCS[sluice.$s.$step]=$docs
    # failed tasks or skipped records of the crawl, if any
    jq -r --arg w "sluice $s $step" '
        (.tasks | to_entries[] | select((.key | test("fail|retried|obsolete|cancel"; "i")) and .value > 0)
            | "\($w): crawl tasks \(.key) = \(.value)"),
        (.worker | to_entries[] | .key as $k | .value | to_entries[]
            | select((.key | test("vanished|unreadable|corrupt|skipped|refused|limits|failed"; "i")) and .value > 0)
            | "\($w): \($k) \(.key) = \(.value)")' "$TMP/crawl-$s-$step.json" | sed 's/^/note: /'
}

sluice_nochange() { # SCOPE: RUNS no-change re-imports after a warm-up one
    local s=$1 out=() r
    sluice_step "$s" warmup
    for r in $(seq 1 "$RUNS"); do
        sluice_step "$s" nochange
        out+=("${T[sluice.$s.nochange]}")
    done
    set_stats "sluice.$s.nochange" "${out[@]}"
    TC[sluice.$s.nochange]=-
}

# ---------------------------------------------------------------- peers
OMEGA_DB=$TMP/omega-db
# omindex has no handler for .md and .xml (it skips them, ~40% of the tree):
# markdown as text/plain, XML through its HTML parser (tags stripped, as
# Sluice's XML extractor does), so that it indexes the same plain files.
# Archives (zip, tar.gz) it skips: it has no archive support.
OMINDEX_OPTS=(--mime-type=md:text/plain --mime-type=xml:text/html)
RECOLL_CONF=$TMP/recoll-conf
omindex_step() { # STEP
    local t m r
    read -r t m r < <(py measure "$TMP/omindex-$1.log" omindex "${OMINDEX_OPTS[@]}" \
        --db "$OMEGA_DB" --url / "${ROOT[$PEER_SCOPE]}")
    T[omindex.$PEER_SCOPE.$1]=$t
    RSS[omindex.$PEER_SCOPE.$1]=$m
    DOCS[omindex.$PEER_SCOPE.$1]=$(omindex-list "$OMEGA_DB" 2>/dev/null | wc -l || echo '?')
    [ "$r" -eq 0 ] || warn "omindex $1 exited $r; see $TMP/omindex-$1.log (--keep)"
}
recoll_step() { # STEP
    local t m r
    read -r t m r < <(py measure "$TMP/recoll-$1.log" recollindex -c "$RECOLL_CONF")
    T[recoll.$PEER_SCOPE.$1]=$t
    RSS[recoll.$PEER_SCOPE.$1]=$m
    DOCS[recoll.$PEER_SCOPE.$1]=$(sed -n 's/^dbtotdocs = //p' "$RECOLL_CONF/idxstatus.txt" 2>/dev/null || true)
    [ "$r" -eq 0 ] || warn "recollindex $1 exited $r; see $TMP/recoll-$1.log (--keep)"
}
peer_nochange() { # TOOL (omindex | recoll)
    local out=() r
    "$1_step" warmup
    for r in $(seq 1 "$RUNS"); do
        "$1_step" nochange
        out+=("${T[$1.$PEER_SCOPE.nochange]}")
    done
    set_stats "$1.$PEER_SCOPE.nochange" "${out[@]}"
}
if [ "$HAVE_RECOLL" -eq 1 ]; then
    mkdir -p "$RECOLL_CONF"
    # topdirs is the tree; aspell (spelling suggestions, built after every
    # run) is off; errors only in the log; the rest is recoll's default
    # (zip members indexed, tar members not: its tar filter is off by default)
    cat >"$RECOLL_CONF/recoll.conf" <<EOF
topdirs = ${ROOT[$PEER_SCOPE]}
noaspell = 1
loglevel = 2
logfilename = $RECOLL_CONF/recoll.log
EOF
fi

# ---------------------------------------------------------------- run
echo "measuring ($([ "$COLD" -eq 1 ] && echo "the page cache dropped before each initial import" || echo "page cache warm: the tree was just written; caches are not dropped"))..."
if [ "$HISTORY_COST" -eq 1 ]; then
    ROOT[nohist]=$TREE
    start_server nohist
    sluice_step nohist initial
    kill -TERM "${SPID[nohist]}"
    wait "${SPID[nohist]}" 2>/dev/null || true
fi
if [ "$METRICS_COST" -eq 1 ]; then
    ROOT[nometrics]=$TREE
    start_server nometrics
    sluice_step nometrics initial
    kill -TERM "${SPID[nometrics]}"
    wait "${SPID[nometrics]}" 2>/dev/null || true
fi
for s in "${SCOPES[@]}"; do
    start_server "$s"
    SCRAPER=""
    if [ "$METRICS_COST" -eq 1 ] && [ "$s" = full ]; then
        # what Prometheus at a 1 s interval would ask of it meanwhile
        (while kill -0 "${SPID[full]}" 2>/dev/null; do
            curl -s -o /dev/null "${SBASE[full]}/metrics"
            sleep 1
        done) &
        SCRAPER=$!
    fi
    if [ "$COLD" -eq 1 ]; then
        sync
        echo 3 >/proc/sys/vm/drop_caches || { echo "import.sh: --cold needs root" >&2; exit 2; }
    fi
    sluice_step "$s" initial
    if [ -n "$SCRAPER" ]; then kill "$SCRAPER" 2>/dev/null || true; wait "$SCRAPER" 2>/dev/null || true; fi
    sluice_nochange "$s"
done
if [ "$HAVE_OMINDEX" -eq 1 ]; then omindex_step initial; peer_nochange omindex; fi
if [ "$HAVE_RECOLL" -eq 1 ]; then recoll_step initial; peer_nochange recoll; fi

read -r cm ca cd sm sa sd < <(py change "$TREE" "$SEED" "${ROOT[$PEER_SCOPE]}")
echo "1% change: $cm files appended to, $ca added, $cd deleted$([ "$PEER_SCOPE" = sub ] && echo "; in d00: $sm, $sa, $sd")"
echo "expected index documents after the change:"
declare -A EXPECT0 NFILES0
for s in "${SCOPES[@]}"; do
    EXPECT0[$s]=${EXPECT[$s]}
    NFILES0[$s]=${NFILES[$s]}
    expect "$s"
done
for s in "${SCOPES[@]}"; do sluice_step "$s" changed; done
if [ "$HAVE_OMINDEX" -eq 1 ]; then omindex_step changed; fi
if [ "$HAVE_RECOLL" -eq 1 ]; then recoll_step changed; fi

# ---------------------------------------------------------------- report
echo
printf '%s\n' "find baseline: find TREE -type f -printf '%s %T@\\n' >/dev/null, warm cache, 1 warm-up + $RUNS runs, median (min-max):"
for s in "${SCOPES[@]}"; do
    echo "  $s: ${NFILES0[$s]} files  $(secs "${T[find.$s]}") s ($(spread "find.$s"))  $(rate "${NFILES0[$s]}" "${T[find.$s]}") files/s"
done
echo
echo "Import times. 'x find' = time / find time (same tree); 'omindex/this', 'recoll/this' = peer time / this time"
echo "(above 1: this is faster). files/s = files in the tree / time. no change: median of $RUNS after a warm-up (min-max)."
echo "crawl_s (Sluice): until the crawl run ended; the rest of time_s is the index catching up."
echo "Peak RSS: Sluice = server VmHWM after the step (cumulative since start); peers = the process's own peak."
echo "anon, file: Sluice's peak anonymous and file-backed resident MiB so far (sampled every 200 ms)."
printf '%-8s %-5s %-9s %7s %9s %8s %9s %8s %5s %5s %8s %12s %11s  %s\n' \
    tool tree step files time_s crawl_s files/s RSS_MiB anon file "x find" omindex/this recoll/this "documents (expected)"
row() { # TOOL SCOPE STEP
    local k=$1.$2.$3 t om rc exp docs cr n
    t=${T[$k]:-}
    [ -n "$t" ] || return 0
    om=-; rc=-
    if [ "$2" = "$PEER_SCOPE" ]; then
        [ -n "${T[omindex.$2.$3]:-}" ] && om=$(ratio "${T[omindex.$2.$3]}" "$t")
        [ -n "${T[recoll.$2.$3]:-}" ] && rc=$(ratio "${T[recoll.$2.$3]}" "$t")
    fi
    if [ "$3" = changed ]; then exp=${EXPECT[$2]} n=${NFILES[$2]}; else exp=${EXPECT0[$2]} n=${NFILES0[$2]}; fi
    docs=${DOCS[$k]:-}
    if [ "$1" != sluice ]; then exp="not comparable"; fi
    [ -n "$docs" ] && docs="$docs ($exp)" || docs="n/a"
    cr=${TC[$k]:--}
    [ "$cr" = - ] || cr=$(secs "$cr")
    printf '%-8s %-5s %-9s %7s %9s %8s %9s %8s %5s %5s %8s %12s %11s  %s\n' "$1" "$2" "$3" "$n" "$(secs "$t")" "$cr" \
        "$(rate "$n" "$t")" "$(mib "${RSS[$k]}")" "$(mib "${ANON[$k]:-}")" "$(mib "${FILEB[$k]:-}")" \
        "$(ratio "$t" "${T[find.$2]}")" "$om" "$rc" "$docs"
    [ -z "${SPREAD[$k]:-}" ] || printf '%-8s %-5s %-9s %7s %19s\n' "" "" "" "" "(min-max $(spread "$k"))"
}
for s in "${SCOPES[@]}"; do
    for st in initial nochange changed; do row sluice "$s" "$st"; done
done
for tool in omindex recoll; do
    for st in initial nochange changed; do row "$tool" "$PEER_SCOPE" "$st"; done
done
[ "$HAVE_OMINDEX" -eq 1 ] || echo "omindex: $NO_OMINDEX"
[ "$HAVE_RECOLL" -eq 1 ] || echo "recollindex: $NO_RECOLL"

echo
for s in "${SCOPES[@]}"; do
    for st in initial nochange changed; do
        if [ "$st" = changed ]; then exp=${EXPECT[$s]}; else exp=${EXPECT0[$s]}; fi
        d=${DOCS[sluice.$s.$st]}
        if [ "$d" != "$exp" ]; then
            warn "sluice $s tree, $st: the index has $d documents, expected $exp (difference $((d - exp)))"
        fi
    done
done
if [ "$HAVE_OMINDEX" -eq 1 ]; then
    echo "omindex documents: run as omindex ${OMINDEX_OPTS[*]} (its defaults skip .md and .xml); it has no archive"
    echo "  support (skipped in its initial run: $(grep -o "unknown MIME type '[^']*'" "$TMP/omindex-initial.log" 2>/dev/null | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $NF }' || true))"
fi
if [ "$HAVE_RECOLL" -eq 1 ]; then
    echo "recollindex documents: zip members are indexed, tar members not (its tar filter is off by default), folders are documents too"
fi

# targets
verdict() { awk -v v="$1" -v lim="$2" -v op="$3" 'BEGIN { if (v == "-" || v == "") print "N/A"; else if ((op == "le" && v + 0 <= lim) || (op == "ge" && v + 0 >= lim) || (op == "lt" && v + 0 < lim)) print "PASS"; else print "MISS" }'; }
echo
echo "targets (not enforced):"
for s in "${SCOPES[@]}"; do
    r=$(ratio "${T[sluice.$s.nochange]}" "${T[find.$s]}")
    printf '  %-66s %8s  %s\n' "no-change re-import <= 3x find ($s tree)" "$([ "$r" = - ] && echo - || echo "${r}x")" "$(verdict "$r" 3 le)"
done
p=$PEER_SCOPE
r=-; [ -n "${T[omindex.$p.initial]:-}" ] && r=$(ratio "${T[omindex.$p.initial]}" "${T[sluice.$p.initial]}")
printf '  %-66s %8s  %s\n' "initial import >= 10x faster than omindex ($p tree)" "$([ "$r" = - ] && echo - || echo "${r}x")" "$(verdict "$r" 10 ge)$([ "$HAVE_OMINDEX" -eq 1 ] || echo " (omindex not run)")"
r=-; [ -n "${T[recoll.$p.initial]:-}" ] && r=$(ratio "${T[recoll.$p.initial]}" "${T[sluice.$p.initial]}")
printf '  %-66s %8s  %s\n' "initial import >= 3x faster than recollindex ($p tree)" "$([ "$r" = - ] && echo - || echo "${r}x")" "$(verdict "$r" 3 ge)$([ "$HAVE_RECOLL" -eq 1 ] || echo " (recollindex not run)")"
# the anonymous part: the file-backed pages of the LMDB and SQLite maps
# are the page cache's (docs/operations.md, the memory rule)
m=$(mib "${ANON[sluice.full.changed]}")
printf '  %-66s %8s  %s\n' "peak anonymous memory of the server < 200 MiB (full tree, all steps)" "${m} MiB" "$(verdict "$m" 200 lt)"

if [ -n "$SUMMARY" ]; then
    {
        echo "files ${NFILES0[full]}"
        echo "documents ${DOCS[sluice.full.initial]}"
        echo "initial_s ${T[sluice.full.initial]}"
        echo "crawl_s ${TC[sluice.full.initial]}"
        echo "nochange_s ${T[sluice.full.nochange]}"
        echo "changed_s ${T[sluice.full.changed]}"
        echo "initial_wchar ${WCHAR[sluice.full.initial]}"
        echo "find_s ${T[find.full]}"
        echo "rss_kib ${RSS[sluice.full.changed]}"
        echo "anon_kib ${ANON[sluice.full.changed]}"
        echo "file_kib ${FILEB[sluice.full.changed]}"
        echo "store_peak_kib $(<"$TMP/store-full")"
        echo "threads ${THREADS:-default}"
        echo "commit $commit"
    } >"$SUMMARY"
fi

if [ "$HISTORY_COST" -eq 1 ]; then
    echo
    echo "document history: initial import of the full tree with the history (default) against without it"
    echo "  (history off: jobmanager.history.maxEntriesPerRun 0, a server of its own, run first):"
    printf '  %-12s %9s %9s %9s %14s\n' history time_s crawl_s RSS_MiB jobmanager_MiB
    for s in full nohist; do
        printf '  %-12s %9s %9s %9s %14s\n' "$([ $s = full ] && echo on || echo off)" \
            "$(secs "${T[sluice.$s.initial]}")" "$(secs "${TC[sluice.$s.initial]}")" \
            "$(mib "${RSS[sluice.$s.initial]}")" "$(du -sm "${SDATA[$s]}/jobmanager" | cut -f1)"
    done
    r=$(ratio "${T[sluice.full.initial]}" "${T[sluice.nohist.initial]}")
    printf '  %-66s %8s  %s\n' "initial import with history / without <= 1.10" "${r}x" "$(verdict "$r" 1.10 le)"
fi

if [ "$METRICS_COST" -eq 1 ]; then
    echo
    echo "metrics: initial import of the full tree with the metrics (default, scraped every second) against"
    echo "  without them (http.metrics 0: no counting, /metrics 404; a server of its own, run first):"
    printf '  %-12s %9s %9s %9s\n' metrics time_s crawl_s RSS_MiB
    for s in full nometrics; do
        printf '  %-12s %9s %9s %9s\n' "$([ $s = full ] && echo on || echo off)" \
            "$(secs "${T[sluice.$s.initial]}")" "$(secs "${TC[sluice.$s.initial]}")" \
            "$(mib "${RSS[sluice.$s.initial]}")"
    done
    r=$(ratio "${T[sluice.full.initial]}" "${T[sluice.nometrics.initial]}")
    printf '  %-66s %8s  %s\n' "initial import with metrics / without <= 1.02" "${r}x" "$(verdict "$r" 1.02 le)"
fi

# where Sluice's initial import spent its time (busy seconds of each worker,
# summed over its threads, from the run counters)
echo
for s in "${SCOPES[@]}"; do
    printf 'sluice %s initial import, worker busy time (s, summed over threads; %s threads a worker): %s\n' "$s" "${THREADS:-default}" \
        "$(jq -s -r '[.[].worker // {} | to_entries[] | "\(.key | sub("^[0-9]+_"; "")) \(.value.duration // 0 | . * 100 | round / 100)"] | join(", ")' \
            "$TMP/crawl-$s-initial.json" "$TMP/index-$s-initial.json")"
done

echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# server logs: warnings and errors are shown, never hidden
echo
for s in "${SCOPES[@]}"; do
    nw=$(grep -c ' warn ' "${SLOG[$s]}" || true)
    ne=$(grep -c -E ' (error|fatal) ' "${SLOG[$s]}" || true)
    echo "sluice $s server log: $nw warnings, $ne errors; data dir $(du -sm "${SDATA[$s]}" | cut -f1) MiB"
    grep -E ' (warn|error|fatal) ' "${SLOG[$s]}" | sed -E 's/^[^ ]+ //' | sort | uniq -c | sort -rn | head -5 | sed 's/^/    /' || true
done
