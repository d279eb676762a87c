#!/bin/bash
# bench/pdf_cost.sh: what one PDF costs three ways, on the same file, N
# times each, one after the other in this run: a pdftotext and a pdfinfo
# process per document (poppler-utils; the way a plain converter entry
# reads PDFs), poppler read in-process (poppler-glib: the text of every
# page, the title, author and page count; a program compiled here from
# the C below), and sluice-pdf as the server runs it (one persistent
# process given N requests; docs/formats.md "Persistent converters").
# The choice it informs: in-process saves the start of two processes per
# PDF, but a PDF that crashes or hangs poppler would take the server with
# it; sluice-pdf keeps the isolation.  Not a test; needs
# libpoppler-glib-dev (installed with apt-get when missing, as root), cc
# and build/sluice-pdf (SLUICE_PDF).
#   bench/pdf_cost.sh [PDF] [N]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PDF=${1:-$REPO/tests/docs/sample.pdf}
N=${2:-200}
SLUICE_PDF=${SLUICE_PDF:-$REPO/build/sluice-pdf}
[ -x "$SLUICE_PDF" ] || { echo "pdf_cost.sh: no $SLUICE_PDF (make build)" >&2; exit 1; }
if ! pkg-config --exists poppler-glib; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        libpoppler-glib-dev >/dev/null
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-pdf.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/inproc.c" <<'C'
#include <poppler.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* argv[1] a PDF, argv[2] how often: open it, every page's text, the
 * metadata; prints milliseconds per document and the text's bytes. */
int main(int argc, char **argv) {
    char *uri = g_filename_to_uri(argv[1], NULL, NULL);
    int n = atoi(argv[2]);
    size_t bytes = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        PopplerDocument *d = poppler_document_new_from_file(uri, NULL, NULL);
        if (d == NULL) return 1;
        for (int p = 0; p < poppler_document_get_n_pages(d); p++) {
            PopplerPage *pg = poppler_document_get_page(d, p);
            char *t = poppler_page_get_text(pg);
            bytes += t != NULL ? strlen(t) : 0;
            g_free(t);
            g_object_unref(pg);
        }
        g_free(poppler_document_get_title(d));
        g_free(poppler_document_get_author(d));
        g_object_unref(d);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f %zu\n", ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6) / n, bytes / n);
    g_free(uri);
    return 0;
}
C
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -include string.h -o "$TMP/inproc" "$TMP/inproc.c" $(pkg-config --cflags --libs poppler-glib)
per() { # COMMAND...: milliseconds per run of COMMAND, N runs
    local s e
    s=$EPOCHREALTIME
    for _ in $(seq "$N"); do "$@" >/dev/null 2>&1; done
    e=$EPOCHREALTIME
    awk -v s="$s" -v e="$e" -v n="$N" 'BEGIN { printf "%.2f", (e - s) * 1000 / n }'
}
echo "PDF: $PDF ($(stat -c %s "$PDF") bytes), $N runs each; load average $(cut -d' ' -f1-3 /proc/loadavg)"
t=$(per pdftotext -q -enc UTF-8 -eol unix "$PDF" -)
i=$(per pdfinfo -isodates -enc UTF-8 "$PDF")
b=$(per /bin/true)
read -r p bytes < <("$TMP/inproc" "$PDF" "$N")
# sluice-pdf as the server runs it: one process, N requests on its stdin
abs=$(realpath "$PDF")
for _ in $(seq "$N"); do printf '%s\t%s\n' "$abs" 4194304; done >"$TMP/requests"
s=$EPOCHREALTIME
oks=$("$SLUICE_PDF" <"$TMP/requests" | grep -ac '^ok$' || true)
e=$EPOCHREALTIME
h=$(awk -v s="$s" -v e="$e" -v n="$N" 'BEGIN { printf "%.2f", (e - s) * 1000 / n }')
[ "$oks" = "$N" ] || echo "sluice-pdf answered ok $oks times of $N"
echo "pdftotext process:         $t ms"
echo "pdfinfo process:           $i ms"
echo "a process that does nothing: $b ms"
echo "both (pdftotext, pdfinfo): $(awk -v a="$t" -v b="$i" 'BEGIN { printf "%.2f", a + b }') ms"
echo "poppler-glib in-process:   $p ms ($bytes bytes of text)"
echo "sluice-pdf, persistent (Sluice's way): $h ms"
echo "ratio both processes / sluice-pdf: $(awk -v a="$t" -v b="$i" -v c="$h" 'BEGIN { printf "%.1f", (a + b) / c }')"
echo "ratio sluice-pdf / in-process: $(awk -v h="$h" -v c="$p" 'BEGIN { printf "%.2f", h / c }')"
