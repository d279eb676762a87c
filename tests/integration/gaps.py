#!/usr/bin/env python3
"""gaps.py LOG GAP_MS [--no-overlap] [--min N]: do the requests of a test
site's access log (lines "start end status path", monotonic seconds) keep
GAP_MS between them?

The times are the Python site's, taken when a handler thread runs: on a
loaded machine one request's thread starts late and the next one's on
time, so two requests can be logged closer than the crawler sent them
(0.134, 0.044 and 0.008 s were seen for gaps of 0.2 and 0.1 s in CI).
So the gap is checked over the whole log: n requests must span at least
(n - 1) x GAP_MS, less 100 ms for the delays of the first and the last.
A crawler that ignored the gap would take a few ms a request.

--no-overlap: also, no request starts before the one before it ended (15
ms of jitter allowed).  --min N: at least N requests (default 2).
Prints one line; exits 1 when a check fails."""
import sys


def main(argv):
    log, gap = argv[1], float(argv[2]) / 1000.0
    no_overlap = "--no-overlap" in argv
    least = int(argv[argv.index("--min") + 1]) if "--min" in argv else 2
    rows = sorted((float(a), float(b)) for a, b, *_ in (l.split() for l in open(log)))
    pairs = list(zip(rows, rows[1:]))
    span = rows[-1][0] - rows[0][0] if rows else 0.0
    need = len(pairs) * gap - 0.1
    short = min((s1 - s0 for (s0, _), (s1, _) in pairs), default=0.0)
    over = ["%.3f s after the previous one's end" % (s1 - e0)
            for (_, e0), (s1, _) in pairs if no_overlap and s1 < e0 - 0.015]
    print("%d requests over %.3f s (at least %.3f s), shortest gap %.3f s%s" %
          (len(rows), span, need, short, "; overlaps: " + "; ".join(over[:3]) if over else ""))
    return 1 if over or span < need or len(rows) < least else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
