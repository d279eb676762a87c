/*
 * Shared by the textExtractor's unit test (test_text_extractor) and its
 * fuzz harness (tests/fuzz/fuzz_text.c): a task backend whose input
 * sources return 1 to 13 bytes per read, so that every extractor is also
 * fed in many small chunks.  Plain C, no cmocka.  Include after
 * workers/workers_int.h.
 */
#ifndef SL_TESTS_TEXT_EXTRACTOR_FIXTURE_H
#define SL_TESTS_TEXT_EXTRACTOR_FIXTURE_H

#include <stddef.h>

static const struct sl__wk_ops *chunky_inner; /* the wrapped ops */

struct chunky {
    struct sl_source inner;
    void *handle;
    unsigned step;
};

static inline int
chunky_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    struct chunky *c = ctx;
    size_t k = 1 + c->step++ % 13;

    return c->inner.read(c->inner.ctx, buf, k < cap ? k : cap, n);
}

static inline int
chunky_open(void *conn,
            const char *st,
            const char *id,
            void **handle,
            struct sl_source *src,
            struct sl_err *err)
{
    struct chunky *c = sl_calloc(1, sizeof(*c));
    int rc = chunky_inner->input_open(conn, st, id, &c->handle, &c->inner, err);

    if (rc != 0) {
        sl_free(c);
        return rc;
    }
    src->read = chunky_read;
    src->ctx = c;
    *handle = c;
    return 0;
}

static inline void
chunky_close(void *handle)
{
    struct chunky *c = handle;

    chunky_inner->input_close(c->handle);
    sl_free(c);
}

/* Make *@out the ops @inner with inputs served in small reads (@inner is
 * kept in a static: one wrapped backend per program). */
static inline void
chunky_ops_init(struct sl__wk_ops *out, const struct sl__wk_ops *inner)
{
    chunky_inner = inner;
    *out = *inner;
    out->input_open = chunky_open;
    out->input_close = chunky_close;
}

#endif /* SL_TESTS_TEXT_EXTRACTOR_FIXTURE_H */
