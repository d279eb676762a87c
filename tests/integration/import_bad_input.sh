#!/bin/bash
# File import of a tree full of bad input (issue 5): a zip bomb, archive
# entries with ../ and absolute paths, a symlink loop crawled with
# followSymbolicLinks, a FIFO, a 2 GiB sparse file, a corrupt and a
# truncated archive, an unreadable file.  The run SUCCEEDS, the bad items
# are counted in the run data, the good files are indexed, nothing is
# written outside the data dir, and the server's peak RSS stays under
# 300 MiB.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/bad"
W="$TMP/work"
mkdir -p "$T/sub" "$W/x/y"
T=$(realpath "$T")
echo "good kilo" >"$T/good.txt"
echo "good lima" >"$T/sub/good2.txt"
# zip bomb: 600 MiB of zeros, a ratio far above maxRatio (100).
truncate -s 600M "$W/zeros"
(cd "$W" && zip -q "$T/bomb.zip" zeros)
rm "$W/zeros"
# entries that climb out (../) or are absolute: GNU tar keeps them with -P.
echo "mike escape" >"$W/x/esc.txt"
(cd "$W/x/y" && tar -P -cf "$T/evil.tar" ../esc.txt "$W/x/esc.txt")
# a loop: followed links come back to an ancestor
ln -s .. "$T/sub/loop"
# links out of rootFolder (filters.linksOutsideRoot false): skipped
echo "oscar outside" >"$W/outside.txt"
ln -s "$W/outside.txt" "$T/outside-link.txt"
ln -s "$W/x" "$T/outside-dir"
ln -s /etc/passwd "$T/passwd"
ln -s good.txt "$T/inside-link.txt"
mkfifo "$T/fifo"
truncate -s 2G "$T/sparse.bin"
head -c 4096 /dev/urandom >"$T/corrupt.zip"
echo "november" >"$W/n.txt"
(cd "$W" && zip -q full.zip n.txt && head -c 60 full.zip >"$T/truncated.zip")
# names flagged as UTF-8 (Python's zipfile sets the flag for non-ASCII
# names): a valid one, and one whose bytes are not UTF-8 (patched in)
python3 - "$T/names.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("caf\u00e9-papa.txt", "papa quebec")
    z.writestr("bad\u00e9.txt", "romeo sierra")
d = open(sys.argv[1], "rb").read().replace("bad\u00e9".encode(), b"bad\xff\xfe")
open(sys.argv[1], "wb").write(d)
PY
echo "secret" >"$T/unreadable.txt"
chmod 000 "$T/unreadable.txt"
BEFORE=$(find "$TMP" -path "$TMP/data" -prune -o -print | wc -l)

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
define_crawl crawlBad "$T" bad '{"filters": {"followSymbolicLinks": true}}'
if crawl crawlBad; then ok "the run SUCCEEDED"; else fail "the run failed: $(cat "$TMP/crawl.err")"; fi
cp "$RUNJSON" "$TMP/run-bad.json"

[ "$(counter files.skipped.special)" -ge 1 ] && ok "the FIFO is skipped and counted" ||
    fail "files.skipped.special = $(counter files.skipped.special)"
[ "$(counter files.skipped.size)" -ge 1 ] && ok "the 2 GiB sparse file is skipped by size" ||
    fail "files.skipped.size = $(counter files.skipped.size)"
[ "$(counter files.skipped.outsideRoot)" = 3 ] && ok "3 links out of rootFolder are skipped" ||
    fail "files.skipped.outsideRoot = $(counter files.skipped.outsideRoot)"
"$SLUICE" search --server "$BASE" oscar >"$TMP/hits" 2>/dev/null || true
grep -q "outside" "$TMP/hits" && fail "a file out of rootFolder is indexed: $(cat "$TMP/hits")" ||
    ok "no file out of rootFolder is indexed"
"$SLUICE" search --server "$BASE" root >"$TMP/hits" 2>/dev/null || true
grep -q "passwd" "$TMP/hits" && fail "/etc/passwd is indexed" || ok "/etc/passwd is not indexed"
"$SLUICE" search --server "$BASE" kilo >"$TMP/hits" 2>/dev/null || true
grep -q "inside-link.txt" "$TMP/hits" && ok "a link inside rootFolder is followed" ||
    fail "inside link: $(cat "$TMP/hits")"
[ "$(counter directories.loops)" -ge 1 ] && ok "the symlink loop is detected" ||
    fail "directories.loops = $(counter directories.loops)"
[ "$(counter limits.ratio)" -ge 1 ] || [ "$(counter limits.totalBytes)" -ge 1 ] &&
    ok "the zip bomb hits the ratio limit" || fail "limits.ratio = $(counter limits.ratio)"
[ "$(counter entries.sanitised)" -ge 1 ] && ok "../ and absolute entries are sanitised" ||
    fail "entries.sanitised = $(counter entries.sanitised)"
[ "$(counter compounds.corrupt)" -ge 2 ] && ok "corrupt and truncated archives are counted" ||
    fail "compounds.corrupt = $(counter compounds.corrupt)"
if [ "$(id -u)" = 0 ]; then
    echo "skip - unreadable file: root reads mode 000 files (not counted)"
else
    [ "$(counter files.unreadable)" -ge 1 ] && ok "the unreadable file is counted" ||
        fail "files.unreadable = $(counter files.unreadable)"
fi
"$SLUICE" search --server "$BASE" kilo >"$TMP/hits" 2>/dev/null
grep -qF "$T/good.txt" "$TMP/hits" && ok "good files are indexed" || fail "search kilo: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" lima >"$TMP/hits" 2>/dev/null
grep -qF "$T/sub/good2.txt" "$TMP/hits" && ok "good files in sub-folders are indexed once" || fail "search lima: $(cat "$TMP/hits")"
[ "$(grep -c good2.txt "$TMP/hits")" = 1 ] && ok "the loop does not index a file twice" || fail "good2 hits: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" mike >"$TMP/hits" 2>/dev/null
grep -q "evil.tar!/" "$TMP/hits" && ok "sanitised entries are indexed inside the archive" || fail "search mike: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" quebec >"$TMP/hits" 2>/dev/null
grep -qF "names.zip!/café-papa.txt" "$TMP/hits" && ok "a zip entry named in UTF-8 is indexed under its name" ||
    fail "search quebec: $(cat "$TMP/hits")"
"$SLUICE" search --server "$BASE" sierra >"$TMP/hits" 2>/dev/null
grep -qF "names.zip!/unnamed-2" "$TMP/hits" && [ "$(counter entries.unnamed)" = 1 ] &&
    ok "a zip entry whose UTF-8 name is invalid is indexed as unnamed-2 and counted" ||
    fail "search sierra: $(cat "$TMP/hits"), entries.unnamed = $(counter entries.unnamed)"
AFTER=$(find "$TMP" -path "$TMP/data" -prune -o -print | wc -l)
# run.json, crawl.err, page.json, hits, body, headers, run-bad.json, config
[ "$AFTER" -le $((BEFORE + 10)) ] && [ ! -e "$W/esc.txt" ] && [ ! -e "$TMP/esc.txt" ] &&
    ok "nothing was extracted to the file system" || fail "files appeared: before $BEFORE, after $AFTER"
rss=$(server_peak_rss_kib)
[ "$rss" -lt $((300 * 1024)) ] && ok "peak RSS $((rss / 1024)) MiB < 300 MiB" ||
    fail "peak RSS $((rss / 1024)) MiB"
req GET /smila/index/default/
expect_jq '.documentCount >= 5' "the index has the good records"

chmod 644 "$T/unreadable.txt"
stop_server
finish
