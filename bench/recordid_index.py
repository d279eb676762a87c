#!/usr/bin/env python3
"""bench/recordid_index.py: what the index's `_recordid` UNIQUE index writes
per document as the collection grows.

The keys are the file paths of a tree (bench/import.sh's generated tree,
e.g. /tmp/sluice-scale-trees/tree-100000-42-10000), repeated COPIES times
under different roots, in the order the fileCrawler lists them: breadth
first, each directory's entries in readdir order (or sorted with
--sorted).  They are inserted into a table shaped like the index's rows
(an integer key, the record id UNIQUE, a small payload) with the index's
settings (16 KiB pages, WAL, synchronous NORMAL), 256 rows a transaction,
and the WAL bytes of the last 10% of the inserts are printed per row: a
B-tree whose inserts land at random pages writes more per row as it
grows.  Not a test; run it at 1 and 10 copies and compare.

usage: bench/recordid_index.py TREE [--copies N] [--sorted] [--db FILE]
"""
import argparse
import collections
import os
import sqlite3
import time

PAGE = 16384
BATCH = 256


def keys_of(tree, copies, ordered):
    dirs = collections.deque((tree, "/data/c%02d" % k) for k in range(copies))
    keys = []
    while dirs:
        real, virt = dirs.popleft()
        ents = list(os.scandir(real))
        if ordered:
            ents.sort(key=lambda e: e.name)
        for e in ents:
            if e.is_dir(follow_symlinks=False):
                dirs.append((e.path, virt + "/" + e.name))
            else:
                keys.append(virt + "/" + e.name)
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--sorted", action="store_true")
    ap.add_argument("--db", default="/tmp/sluice-recordid-index.db")
    a = ap.parse_args()
    keys = keys_of(a.tree, a.copies, a.sorted)
    for f in (a.db, a.db + "-wal", a.db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    db = sqlite3.connect(a.db, isolation_level=None)
    db.execute("PRAGMA page_size=%d" % PAGE)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, rid TEXT NOT NULL UNIQUE, pad BLOB)")
    pad = b"x" * 200
    n = len(keys)
    mark = int(n * 0.9) // BATCH * BATCH
    start = time.monotonic()
    i = 0
    while i < n:
        if i == mark:  # from here every frame stays in the WAL
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("BEGIN")
        db.executemany("INSERT INTO t(rid, pad) VALUES (?, ?)",
                       [(k, pad) for k in keys[i:i + BATCH]])
        db.execute("COMMIT")
        i += BATCH
    wal = os.path.getsize(a.db + "-wal")
    print("%s order, %d rows: the last 10%% wrote %.0f WAL bytes a row "
          "(%.3f pages); inserts %.1f s"
          % ("sorted" if a.sorted else "readdir", n, wal / (n - mark),
             wal / (n - mark) / (PAGE + 24), time.monotonic() - start))
    db.close()
    for f in (a.db, a.db + "-wal", a.db + "-shm"):
        if os.path.exists(f):
            os.remove(f)


if __name__ == "__main__":
    main()
