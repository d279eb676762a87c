/*
 * Object store public API: checks names, keeps the writer state machine
 * (open -> committed | failed) and dispatches to a backend through its
 * hook table (objectstore_int.h).  Nothing here touches the filesystem
 * but a file a caller hands in to be stored (sl_obj_writer_open_file).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objectstore/objectstore_int.h"

#define COPY_BUF ((size_t)64 << 10) /* copies where data cannot be shared */

struct sl_obj {
    const struct sl__obj_backend_type *type; /* backend hooks */
    void *ctx;                               /* backend instance */
};

enum writer_state {
    WRITER_OPEN = 0,
    WRITER_COMMITTED = 1,
    WRITER_FAILED = 2,
    WRITER_SEALED = 3, /* no more writes; commit or free */
};

struct sl_obj_writer {
    const struct sl__obj_backend_type *type; /* backend hooks */
    void *ctx;                               /* backend writer */
    char *store;                             /* for messages */
    char *id;                                /* for messages */
    uint64_t size;                           /* bytes written so far */
    enum writer_state state;                 /* see enum */
};

struct sl_obj_reader {
    const struct sl__obj_backend_type *type; /* backend hooks */
    void *ctx;                               /* backend reader */
    uint64_t size;                           /* size at open */
};

/* ------------------------------------------------------------------------
 * Service
 * --------------------------------------------------------------------- */

/*
 * Wraps a constructed backend context.  The ABI check protects against a
 * backend compiled against another version of objectstore_int.h.
 */
static int
obj_wrap(const struct sl__obj_backend_type *type,
         void *ctx,
         struct sl_obj **out,
         struct sl_err *err)
{
    struct sl_obj *o = NULL;

    if (SL_NEVER(type->abi_version != SL__OBJ_BACKEND_ABI)) {
        type->close(ctx);
        return sl_err_set(err,
                          SL_EINTERNAL,
                          NULL,
                          "object store backend '%s' has ABI %u, expected %d",
                          type->name,
                          type->abi_version,
                          SL__OBJ_BACKEND_ABI);
    }
    o = sl_calloc(1, sizeof(*o));
    o->type = type;
    o->ctx = ctx;
    *out = o;
    return 0;
}

int
sl_obj_open_fs(const char *root,
               enum sl_durability durability,
               struct sl_obj **out,
               struct sl_err *err)
{
    void *ctx = NULL;
    int rc = 0;

    *out = NULL;
    if (root == NULL || root[0] == '\0') {
        return sl_err_set(
            err, SL_EINVAL, NULL, "object store root directory is empty");
    }
    rc = sl__obj_fs_new(root, durability, &ctx, err);
    if (rc != 0) {
        return rc;
    }
    return obj_wrap(&sl__obj_backend_fs, ctx, out, err);
}

int
sl_obj_open_s3(const struct sl_obj_s3_config *cfg,
               struct sl_obj **out,
               struct sl_err *err)
{
    void *ctx = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl__obj_s3_new(cfg, &ctx, err);
    if (rc != 0) {
        return rc;
    }
    return obj_wrap(&sl__obj_backend_s3, ctx, out, err);
}

const char *
sl_obj_backend_name(const struct sl_obj *o)
{
    return o->type->name;
}

void
sl_obj_close(struct sl_obj *o)
{
    if (o == NULL) {
        return;
    }
    o->type->close(o->ctx);
    sl_free(o);
}

/* ------------------------------------------------------------------------
 * Stores
 * --------------------------------------------------------------------- */

int
sl_obj_store_create(struct sl_obj *o,
                    const char *store,
                    int *created,
                    struct sl_err *err)
{
    int dummy = 0;
    int rc = 0;

    rc = sl_name_check_store(store, err);
    if (rc != 0) {
        return rc;
    }
    return o->type->store_create(
        o->ctx, store, created != NULL ? created : &dummy, err);
}

int
sl_obj_store_delete(struct sl_obj *o, const char *store, struct sl_err *err)
{
    int rc = 0;

    rc = sl_name_check_store(store, err);
    if (rc != 0) {
        return rc;
    }
    return o->type->store_delete(o->ctx, store, err);
}

struct exists_scan {
    const char *want; /* store looked for */
};

/* store_list callback of the default store_exists: 1 stops at a match. */
static int
exists_cb(void *ctx, const char *store)
{
    const struct exists_scan *scan = ctx;

    return strcmp(scan->want, store) == 0 ? 1 : 0;
}

int
sl_obj_store_exists(struct sl_obj *o, const char *store, struct sl_err *err)
{
    struct exists_scan scan = {store};
    int rc = 0;

    rc = sl_name_check_store(store, err);
    if (rc != 0) {
        return rc;
    }
    if (o->type->store_exists != NULL) {
        return o->type->store_exists(o->ctx, store, err);
    }
    rc = o->type->store_list(o->ctx, exists_cb, &scan, err);
    if (rc == 1) {
        return 0;
    }
    if (rc == 0) {
        return sl_err_set(err, SL_ENOENT, NULL, "no store '%s'", store);
    }
    return rc;
}

int
sl_obj_store_list(struct sl_obj *o,
                  int (*cb)(void *ctx, const char *store),
                  void *ctx,
                  struct sl_err *err)
{
    return o->type->store_list(o->ctx, cb, ctx, err);
}

/* ------------------------------------------------------------------------
 * Objects
 * --------------------------------------------------------------------- */

/* Both names are checked before any backend sees them. */
static int
check_names(const char *store, const char *id, struct sl_err *err)
{
    int rc = 0;

    rc = sl_name_check_store(store, err);
    if (rc != 0) {
        return rc;
    }
    return sl_name_check_object_id(id, err);
}

int
sl_obj_list(struct sl_obj *o,
            const char *store,
            const char *prefix,
            int (*cb)(void *ctx, const struct sl_obj_info *info),
            void *ctx,
            struct sl_err *err)
{
    int rc = 0;

    rc = sl_name_check_store(store, err);
    if (rc != 0) {
        return rc;
    }
    return o->type->list(
        o->ctx, store, prefix != NULL ? prefix : "", cb, ctx, err);
}

int
sl_obj_stat(struct sl_obj *o,
            const char *store,
            const char *id,
            struct sl_obj_info *info,
            struct sl_err *err)
{
    int rc = 0;

    rc = check_names(store, id, err);
    if (rc != 0) {
        return rc;
    }
    rc = o->type->stat(o->ctx, store, id, info, err);
    info->id = NULL;
    return rc;
}

int
sl_obj_delete(struct sl_obj *o,
              const char *store,
              const char *id,
              struct sl_err *err)
{
    int rc = 0;

    rc = check_names(store, id, err);
    if (rc != 0) {
        return rc;
    }
    return o->type->delete (o->ctx, store, id, err);
}

/* ------------------------------------------------------------------------
 * Writers
 * --------------------------------------------------------------------- */

/* Wrap backend writer @p wctx of @p id in state @p state. */
static struct sl_obj_writer *
writer_wrap(const struct sl_obj *o,
            const char *store,
            const char *id,
            void *wctx,
            enum writer_state state)
{
    struct sl_obj_writer *w = sl_calloc(1, sizeof(*w));

    w->type = o->type;
    w->ctx = wctx;
    w->store = sl_strdup(store);
    w->id = sl_strdup(id);
    w->state = state;
    return w;
}

int
sl_obj_writer_open(struct sl_obj *o,
                   const char *store,
                   const char *id,
                   struct sl_obj_writer **out,
                   struct sl_err *err)
{
    void *wctx = NULL;
    int rc = 0;

    *out = NULL;
    rc = check_names(store, id, err);
    if (rc != 0) {
        return rc;
    }
    rc = o->type->writer_open(o->ctx, store, id, &wctx, err);
    if (rc != 0) {
        return rc;
    }
    *out = writer_wrap(o, store, id, wctx, WRITER_OPEN);
    return 0;
}

/* Reads @p cap bytes at @p off of a copy's source; *n = 0 at its end. */
typedef int (*copy_read_fn)(void *src,
                            uint64_t off,
                            void *buf,
                            size_t cap,
                            size_t *n,
                            struct sl_err *err);

/* A sealed writer of @p id holding what @p rd reads from offset 0 on. */
static int
open_copied(struct sl_obj *o,
            const char *store,
            const char *id,
            copy_read_fn rd,
            void *src,
            struct sl_obj_writer **out,
            struct sl_err *err)
{
    struct sl_obj_writer *w = NULL;
    char *buf = NULL;
    uint64_t off = 0;
    size_t n = 0;
    int rc = sl_obj_writer_open(o, store, id, &w, err);

    if (rc != 0) {
        return rc;
    }
    buf = sl_malloc(COPY_BUF);
    while ((rc = rd(src, off, buf, COPY_BUF, &n, err)) == 0 && n > 0) {
        rc = sl_obj_writer_write(w, buf, n, err);
        if (rc != 0) {
            break;
        }
        off += n;
    }
    sl_free(buf);
    if (rc == 0) {
        rc = sl_obj_writer_seal(w, err);
    }
    if (rc != 0) {
        sl_obj_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* The file a copy reads, and the object it is for (messages). */
struct fd_src {
    int fd;
    const char *store;
    const char *id;
};

static int
fd_read_at(void *src,
           uint64_t off,
           void *buf,
           size_t cap,
           size_t *n,
           struct sl_err *err)
{
    const struct fd_src *f = src;
    ssize_t got = 0;

    do {
        got = pread(f->fd, buf, cap, (off_t)off);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          NULL,
                          "cannot read the file to store as object '%s' "
                          "of store '%s': %s",
                          f->id,
                          f->store,
                          sl_errno_str(errno));
    }
    *n = (size_t)got;
    return 0;
}

int
sl_obj_writer_open_file(struct sl_obj *o,
                        const char *store,
                        const char *id,
                        int fd,
                        struct sl_obj_writer **out,
                        struct sl_err *err)
{
    struct stat st;
    void *wctx = NULL;
    int rc = 0;

    *out = NULL;
    rc = check_names(store, id, err);
    if (rc != 0) {
        return rc;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return sl_err_set(err,
                          SL_EINVAL,
                          NULL,
                          "object '%s' of store '%s': the source is not a "
                          "regular file",
                          id,
                          store);
    }
    if (o->type->writer_open_file != NULL) {
        rc = o->type->writer_open_file(o->ctx, store, id, fd, &wctx, err);
        if (rc == 0) {
            *out = writer_wrap(o, store, id, wctx, WRITER_SEALED);
            (*out)->size = (uint64_t)st.st_size;
            return 0;
        }
        if (rc != 1) {
            return rc;
        }
    }
    {
        struct fd_src src = {fd, store, id};

        return open_copied(o, store, id, fd_read_at, &src, out, err);
    }
}

static int
reader_read_at(void *src,
               uint64_t off,
               void *buf,
               size_t cap,
               size_t *n,
               struct sl_err *err)
{
    return sl_obj_reader_pread(src, off, buf, cap, n, err);
}

int
sl_obj_writer_open_copy(struct sl_obj *o,
                        const char *store,
                        const char *id,
                        struct sl_obj_reader *src,
                        struct sl_obj_writer **out,
                        struct sl_err *err)
{
    int fd = src->type->reader_fd != NULL ? src->type->reader_fd(src->ctx) : -1;

    if (fd >= 0) {
        return sl_obj_writer_open_file(o, store, id, fd, out, err);
    }
    *out = NULL;
    return open_copied(o, store, id, reader_read_at, src, out, err);
}

/* The error of every call on a writer that is no longer open. */
static int
writer_bad_state(const struct sl_obj_writer *w, struct sl_err *err)
{
    return sl_err_set(err,
                      SL_EBADSTATE,
                      NULL,
                      "writer of object '%s' in store '%s' is %s",
                      w->id,
                      w->store,
                      w->state == WRITER_COMMITTED ? "already committed"
                      : w->state == WRITER_SEALED  ? "sealed"
                                                   : "failed");
}

int
sl_obj_writer_write(struct sl_obj_writer *w,
                    const void *data,
                    size_t len,
                    struct sl_err *err)
{
    int rc = 0;

    if (w->state != WRITER_OPEN) {
        return writer_bad_state(w, err);
    }
    if (len == 0) {
        return 0;
    }
    rc = w->type->writer_write(w->ctx, data, len, err);
    if (rc != 0) {
        w->state = WRITER_FAILED;
        return rc;
    }
    w->size += len;
    return 0;
}

uint64_t
sl_obj_writer_size(const struct sl_obj_writer *w)
{
    return w->size;
}

int
sl_obj_writer_seal(struct sl_obj_writer *w, struct sl_err *err)
{
    int rc = 0;

    if (w->state != WRITER_OPEN) {
        return writer_bad_state(w, err);
    }
    if (w->type->writer_seal != NULL) {
        rc = w->type->writer_seal(w->ctx, err);
    }
    w->state = rc == 0 ? WRITER_SEALED : WRITER_FAILED;
    return rc;
}

int
sl_obj_writer_commit(struct sl_obj_writer *w, int *replaced, struct sl_err *err)
{
    int dummy = 0;
    int rc = 0;

    if (w->state != WRITER_OPEN && w->state != WRITER_SEALED) {
        return writer_bad_state(w, err);
    }
    rc = w->type->writer_commit(
        w->ctx, replaced != NULL ? replaced : &dummy, err);
    w->state = rc == 0 ? WRITER_COMMITTED : WRITER_FAILED;
    return rc;
}

void
sl_obj_writer_free(struct sl_obj_writer *w)
{
    if (w == NULL) {
        return;
    }
    w->type->writer_free(w->ctx);
    sl_free(w->store);
    sl_free(w->id);
    sl_free(w);
}

/* Sink hook: the bulk codec gets the SL_E* code, the detail is dropped. */
static int
writer_sink_write(void *ctx, const void *data, size_t len)
{
    return sl_obj_writer_write(ctx, data, len, NULL);
}

void
sl_obj_writer_sink(struct sl_obj_writer *w, struct sl_sink *sink)
{
    sink->write = writer_sink_write;
    sink->ctx = w;
}

/* ------------------------------------------------------------------------
 * Readers
 * --------------------------------------------------------------------- */

int
sl_obj_reader_open(struct sl_obj *o,
                   const char *store,
                   const char *id,
                   struct sl_obj_reader **out,
                   struct sl_err *err)
{
    struct sl_obj_reader *r = NULL;
    void *rctx = NULL;
    uint64_t size = 0;
    int rc = 0;

    *out = NULL;
    rc = check_names(store, id, err);
    if (rc != 0) {
        return rc;
    }
    rc = o->type->reader_open(o->ctx, store, id, &rctx, &size, err);
    if (rc != 0) {
        return rc;
    }
    r = sl_calloc(1, sizeof(*r));
    r->type = o->type;
    r->ctx = rctx;
    r->size = size;
    *out = r;
    return 0;
}

uint64_t
sl_obj_reader_size(const struct sl_obj_reader *r)
{
    return r->size;
}

int
sl_obj_reader_read(struct sl_obj_reader *r,
                   void *buf,
                   size_t cap,
                   size_t *n,
                   struct sl_err *err)
{
    *n = 0;
    if (cap == 0) {
        return 0;
    }
    return r->type->reader_read(r->ctx, buf, cap, n, err);
}

int
sl_obj_reader_pread(struct sl_obj_reader *r,
                    uint64_t offset,
                    void *buf,
                    size_t cap,
                    size_t *n,
                    struct sl_err *err)
{
    *n = 0;
    if (r->type->reader_pread == NULL) {
        return sl_err_set(err,
                          SL_EINVAL,
                          NULL,
                          "object store backend '%s' has no positioned reads",
                          r->type->name);
    }
    if (cap == 0) {
        return 0;
    }
    return r->type->reader_pread(r->ctx, offset, buf, cap, n, err);
}

void
sl_obj_reader_free(struct sl_obj_reader *r)
{
    if (r == NULL) {
        return;
    }
    r->type->reader_free(r->ctx);
    sl_free(r);
}

/* Source hook: the bulk codec gets the SL_E* code, the detail is dropped. */
static int
reader_source_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    return sl_obj_reader_read(ctx, buf, cap, n, NULL);
}

void
sl_obj_reader_source(struct sl_obj_reader *r, struct sl_source *src)
{
    src->read = reader_source_read;
    src->ctx = r;
}
