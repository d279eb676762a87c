/*
 * Private to the filesystem backend of the object store (fs.c, fs_path.c,
 * fs_object.c, fs_list.c): the instance, the walk of an object id to its
 * folder, and the functions the backend's files share.  objectstore.c
 * sees the backend only through sl__obj_backend_fs (objectstore_int.h).
 *
 * Threading: struct sl__obj_fs is immutable after sl__obj_fs_new, so any
 * number of threads may use it at once (fs.c says more); a walk belongs
 * to the thread that made it.
 */
#ifndef SL_OBJECTSTORE_FS_INT_H_INCLUDED
#define SL_OBJECTSTORE_FS_INT_H_INCLUDED

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objectstore/objectstore_int.h"

#define MAX_DEPTH      (SL_OBJECT_ID_MAX / 2 + 1) /* segments of an id */
#define DIR_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct sl__obj_fs {
    char *root;                    /* root path, for messages only */
    int root_fd;                   /* the root, O_DIRECTORY */
    int tmp_fd;                    /* <root>/.tmp */
    enum sl_durability durability; /* fsync on commit or not */
    pthread_rwlock_t folders;      /* commits shared, folder removal alone */
    int lock_ready;                /* folders was initialised */
};

/* What a directory entry is, looked at without following links. */
enum sl__obj_fs_kind {
    KIND_NONE = 0,  /* no such entry */
    KIND_FILE = 1,  /* regular file: an object */
    KIND_DIR = 2,   /* directory: a folder of objects */
    KIND_LINK = 3,  /* symbolic link: never followed */
    KIND_OTHER = 4, /* fifo, socket, device */
};

/*
 * An object id split into segments, and the fds of the directories on its
 * path: fd[0] is the store, fd[i] the folder named by seg[0..i-1].
 */
struct sl__obj_fs_walk {
    char buf[SL_OBJECT_ID_MAX + 1]; /* the id, '/' replaced by NUL */
    const char *seg[MAX_DEPTH];     /* segments, pointing into buf */
    size_t nseg;                    /* number of segments */
    int fd[MAX_DEPTH];              /* open directories */
    size_t nfd;                     /* number of open fds */
};

/* ------------------------------------------------------------------------
 * The instance (fs.c)
 * --------------------------------------------------------------------- */

/* Take the folder lock shared (a commit) or @p exclusive (the removal of
 * folders); panics when the lock fails. */
void sl__obj_fs_folders_lock(struct sl__obj_fs *fs, int exclusive);
void sl__obj_fs_folders_unlock(struct sl__obj_fs *fs);

/* ------------------------------------------------------------------------
 * Errors, small helpers and path resolution (fs_path.c)
 * --------------------------------------------------------------------- */

/* Maps @p errnum to an SL_E* code and fills @p err with "<what>:
 * <strerror>", <what> formatted from @p fmt. */
int sl__obj_fs_sys_err(struct sl_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void
sl__obj_fs_close_fd(int *fd)
{
    if (*fd >= 0) {
        (void)close(*fd);
        *fd = -1;
    }
}

static inline int64_t
sl__obj_fs_mtime_ms(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* Kind of entry @p name in @p dirfd (enum sl__obj_fs_kind); -errno on
 * errors other than ENOENT. */
int sl__obj_fs_entry_kind(int dirfd, const char *name, struct stat *st);
/* fsync @p fd in fsync durability mode only; the store and the id name it
 * in a message. */
int sl__obj_fs_maybe_fsync(const struct sl__obj_fs *fs,
                           int fd,
                           const char *store,
                           const char *id,
                           struct sl_err *err);

/* Asks the kernel once per process whether openat2 may be used. */
void sl__obj_fs_probe_openat2(void);

/* Splits @p id into the segments of @p w; no fd is open yet. */
void sl__obj_fs_walk_init(struct sl__obj_fs_walk *w, const char *id);
/* Closes the fds of @p w. */
void sl__obj_fs_walk_close(struct sl__obj_fs_walk *w);

/* The innermost open directory: the parent of the last segment when the
 * whole walk succeeded. */
static inline int
sl__obj_fs_walk_parent(const struct sl__obj_fs_walk *w)
{
    return w->fd[w->nfd - 1];
}

static inline const char *
sl__obj_fs_walk_last(const struct sl__obj_fs_walk *w)
{
    return w->seg[w->nseg - 1];
}

/* Opens "<store>/<the first @p nseg segments of @p w>" in one openat2
 * call; -1 with errno when that fails or is not available. */
int sl__obj_fs_fast_open(const struct sl__obj_fs *fs,
                         const char *store,
                         const struct sl__obj_fs_walk *w,
                         size_t nseg,
                         int flags);
/* 1 if store @p store is a real directory (not a link to one). */
int sl__obj_fs_store_is_dir(const struct sl__obj_fs *fs, const char *store);
/* Resolves @p id up to its parent folder in one call: 0, or -1 with
 * errno. */
int sl__obj_fs_walk_fast(const struct sl__obj_fs *fs,
                         const char *store,
                         const char *id,
                         struct sl__obj_fs_walk *w);
/* Opens store @p store as a directory fd; a link in its place is
 * refused. */
int sl__obj_fs_open_store(const struct sl__obj_fs *fs,
                          const char *store,
                          int *out,
                          struct sl_err *err);
/* Opens the store as fd[0] of the walk. */
int sl__obj_fs_walk_open_store(const struct sl__obj_fs *fs,
                               const char *store,
                               struct sl__obj_fs_walk *w,
                               struct sl_err *err);
/* Opens the folders of @p id below the store (fd[0] open), making the
 * missing ones with @p create. */
int sl__obj_fs_walk_dirs(const struct sl__obj_fs *fs,
                         const char *store,
                         const char *id,
                         int create,
                         struct sl__obj_fs_walk *w,
                         struct sl_err *err);
/* Resolves @p id up to its parent folder: store, then folders; all fds
 * closed again on error. */
int sl__obj_fs_walk_resolve(const struct sl__obj_fs *fs,
                            const char *store,
                            const char *id,
                            int create,
                            struct sl__obj_fs_walk *w,
                            struct sl_err *err);
/* The last segment of @p w is an object: a regular file. */
int sl__obj_fs_check_readable(const struct sl__obj_fs_walk *w,
                              const char *store,
                              const char *id,
                              struct stat *st,
                              struct sl_err *err);
/* The last segment of @p w may be (re)placed by a new object. */
int sl__obj_fs_check_writable(const struct sl__obj_fs_walk *w,
                              const char *store,
                              const char *id,
                              int *existed,
                              struct sl_err *err);

/* ------------------------------------------------------------------------
 * Hooks of sl__obj_backend_fs defined in fs_object.c and fs_list.c
 * (objectstore_int.h describes each)
 * --------------------------------------------------------------------- */

int sl__obj_fs_list(void *ctx,
                    const char *store,
                    const char *prefix,
                    int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
                    void *cb_ctx,
                    struct sl_err *err);
int sl__obj_fs_stat(void *ctx,
                    const char *store,
                    const char *id,
                    struct sl_obj_info *info,
                    struct sl_err *err);
int sl__obj_fs_delete(void *ctx,
                      const char *store,
                      const char *id,
                      struct sl_err *err);
int sl__obj_fs_writer_open(void *ctx,
                           const char *store,
                           const char *id,
                           void **wctx,
                           struct sl_err *err);
int sl__obj_fs_writer_open_file(void *ctx,
                                const char *store,
                                const char *id,
                                int fd,
                                void **wctx,
                                struct sl_err *err);
int sl__obj_fs_writer_write(void *wctx,
                            const void *data,
                            size_t len,
                            struct sl_err *err);
int sl__obj_fs_writer_seal(void *wctx, struct sl_err *err);
int sl__obj_fs_writer_commit(void *wctx, int *replaced, struct sl_err *err);
void sl__obj_fs_writer_free(void *wctx);
int sl__obj_fs_reader_open(void *ctx,
                           const char *store,
                           const char *id,
                           void **rctx,
                           uint64_t *size,
                           struct sl_err *err);
int sl__obj_fs_reader_read(
    void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err);
int sl__obj_fs_reader_pread(void *rctx,
                            uint64_t offset,
                            void *buf,
                            size_t cap,
                            size_t *n,
                            struct sl_err *err);
void sl__obj_fs_reader_free(void *rctx);
int sl__obj_fs_reader_fd(void *rctx);

#endif /* SL_OBJECTSTORE_FS_INT_H_INCLUDED */
