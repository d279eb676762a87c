/*
 * Set-up shared by the delta service unit tests (test_delta,
 * test_delta_invalidate, test_delta_visited, test_delta_crash): each test
 * gets a fresh directory under $TMPDIR with the service directory
 * "<dir>/delta" in it, opened or not, and the one-record helpers.  A test
 * file defines its setup as a call of delta_setup with its own directory
 * prefix; teardown is this one.  Include after cmocka.h.
 */
#ifndef SL_TESTS_DELTA_FIXTURE_H
#define SL_TESTS_DELTA_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "deltaservice/deltaservice.h"
#include "tmpdir.h"

struct fixture {
    char dir[512];      /* the mkdtemp directory */
    char path[600];     /* dir/delta: the service directory */
    struct sl_delta *d; /* 16 shards, process durability; NULL: not open */
};

/* The fixture in *state: the directory "<$TMPDIR>/<@prefix>XXXXXX" and,
 * with @open, the service opened on dir/delta. */
static inline int
delta_setup(void **state, const char *prefix, int open)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), prefix));
    (void)snprintf(f->path, sizeof(f->path), "%s/delta", f->dir);
    if (open) {
        assert_int_equal(
            sl_delta_open(f->path, 0, SL_DURABILITY_PROCESS, 0, &f->d, &err),
            0);
    }
    *state = f;
    return 0;
}

/* Close the service if open, remove the directory, free the fixture. */
static inline int
teardown(void **state)
{
    struct fixture *f = *state;

    sl_delta_close(f->d);
    (void)tmpdir_remove(f->dir);
    sl_free(f);
    return 0;
}

static inline struct sl_delta_rec
rec(const char *id, const char *cid, const char *hash, int compound)
{
    struct sl_delta_rec r;

    memset(&r, 0, sizeof(r));
    r.id = id;
    r.compound_id = cid;
    r.hash = hash;
    r.is_compound = compound;
    return r;
}

/* Check one record in run @seq (@cid may be NULL); returns its result. */
static inline int
check1(struct sl_delta *d,
       const char *src,
       uint64_t seq,
       const char *id,
       const char *cid,
       const char *hash)
{
    struct sl_delta_rec r = rec(id, cid, hash, 0);
    struct sl_err err;

    assert_int_equal(sl_delta_check(d, src, seq, &r, 1, &err), 0);
    return r.result;
}

/* Mark one record as pushed in run @seq; the call and the record must
 * succeed. */
static inline void
mark1(struct sl_delta *d,
      const char *src,
      uint64_t seq,
      const char *id,
      const char *cid,
      const char *hash,
      int compound)
{
    struct sl_delta_rec r = rec(id, cid, hash, compound);
    struct sl_err err;

    assert_int_equal(sl_delta_mark_updated(d, src, seq, &r, 1, &err), 0);
    assert_int_equal(r.result, 0);
}

/* Obsolete scan of every shard of run @seq with @cb and @ctx; returns the
 * number removed. */
static inline uint64_t
scan_all(struct sl_delta *d,
         const char *src,
         uint64_t seq,
         int (*cb)(void *, const struct sl_delta_obsolete *, size_t),
         void *ctx)
{
    uint64_t total = 0;
    unsigned i = 0;
    struct sl_err err;

    for (i = 0; i < sl_delta_shards(d); i++) {
        uint64_t removed = 0;

        assert_int_equal(
            sl_delta_obsolete_scan(d, src, seq, i, 0, cb, ctx, &removed, &err),
            0);
        total += removed;
    }
    return total;
}

/* The entries of source @src. */
static inline uint64_t
count(struct sl_delta *d, const char *src)
{
    uint64_t n = 0;
    struct sl_err err;

    assert_int_equal(sl_delta_count(d, src, &n, NULL, &err), 0);
    return n;
}

#endif /* SL_TESTS_DELTA_FIXTURE_H */
