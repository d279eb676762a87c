/*
 * Path resolution of the filesystem backend (docs/objectstore.md): how an
 * object id becomes its open parent folder without following a symbolic
 * link, component by component with openat(O_NOFOLLOW | O_DIRECTORY) from
 * the store's fd or, where the kernel has openat2 (Linux 5.6), in one call
 * with RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH; the checks of what is found
 * at the end of the path; and the wording of system errors that every
 * file of the backend shares.  fs.c describes the layout and the safety
 * argument.
 *
 * Threading: everything here works on its caller's walk and on the
 * immutable instance; the one process-wide state is whether openat2 is
 * used (an atomic, asked of the kernel once).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_openat2) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif
#endif

#include "objectstore/fs_int.h"

#define MKDIR_TRIES 5 /* mkdir+open retried against deleters */

/* ------------------------------------------------------------------------
 * Errors
 * --------------------------------------------------------------------- */

/*
 * Maps @p errnum at the edge and fills @p err with "<what>: <strerror>",
 * where <what> names the store and the object.
 */
int
sl__obj_fs_sys_err(struct sl_err *err, int errnum, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    int code = sl_err_from_errno(errnum);

    if (err == NULL) {
        return code;
    }
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return sl_err_set(err, code, NULL, "%s: %s", what, sl_errno_str(errnum));
}

/* ------------------------------------------------------------------------
 * Small helpers
 * --------------------------------------------------------------------- */

/* Kind of entry @p name in @p dirfd; -errno on errors other than ENOENT. */
int
sl__obj_fs_entry_kind(int dirfd, const char *name, struct stat *st)
{
    struct stat tmp;

    if (st == NULL) {
        st = &tmp;
    }
    if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? KIND_NONE : -errno;
    }
    if (S_ISREG(st->st_mode)) {
        return KIND_FILE;
    }
    if (S_ISDIR(st->st_mode)) {
        return KIND_DIR;
    }
    if (S_ISLNK(st->st_mode)) {
        return KIND_LINK;
    }
    return KIND_OTHER;
}

/* fsync @p fd in fsync durability mode only; @p what names it. */
int
sl__obj_fs_maybe_fsync(const struct sl__obj_fs *fs,
                       int fd,
                       const char *store,
                       const char *id,
                       struct sl_err *err)
{
    if (fs->durability != SL_DURABILITY_FSYNC) {
        return 0;
    }
    if (fsync(fd) != 0) {
        return sl__obj_fs_sys_err(err,
                                  errno,
                                  "cannot fsync for object '%s' in store '%s'",
                                  id,
                                  store);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Path resolution
 * --------------------------------------------------------------------- */

void
sl__obj_fs_walk_init(struct sl__obj_fs_walk *w, const char *id)
{
    char *p = w->buf;

    (void)snprintf(w->buf, sizeof(w->buf), "%s", id);
    w->nseg = 0;
    w->nfd = 0;
    w->seg[w->nseg++] = p;
    for (; *p != '\0'; p++) {
        if (*p == '/' && SL_ALWAYS(w->nseg < MAX_DEPTH)) {
            *p = '\0';
            w->seg[w->nseg++] = p + 1;
        }
    }
}

void
sl__obj_fs_walk_close(struct sl__obj_fs_walk *w)
{
    while (w->nfd > 0) {
        w->nfd--;
        sl__obj_fs_close_fd(&w->fd[w->nfd]);
    }
}

/* Length of the id prefix made of segments 0..i (for messages). */
static int
walk_prefix_len(const struct sl__obj_fs_walk *w, size_t i)
{
    return (int)((size_t)(w->seg[i] - w->buf) + strlen(w->seg[i]));
}

/* ------------------------------------------------------------------------
 * One-call resolution (openat2)
 * --------------------------------------------------------------------- */

/* 1 while openat2 may be used: the first store opened asks the kernel
 * once (probe_openat2); 0 when the kernel or a seccomp filter refuses the
 * call itself, or when a test turned it off. */
static atomic_int openat2_on = 1;
static pthread_once_t openat2_once = PTHREAD_ONCE_INIT;

void
sl__obj_fs_set_openat2(int on)
{
    atomic_store(&openat2_on, on != 0);
}

int
sl__obj_fs_openat2_on(void)
{
    return atomic_load(&openat2_on);
}

#ifdef HAVE_OPENAT2
/* openat2 of @path below @dirfd with @flags, following no symbolic link
 * and never leaving @dirfd: the fd, or -1 with errno. */
static int
openat2_beneath(int dirfd, const char *path, int flags)
{
    struct open_how how;

    memset(&how, 0, sizeof(how));
    how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}
#endif

/* Whether this kernel lets us call openat2 at all: asked once, on the
 * first root opened.  A later failure (EPERM from a security module for
 * one object, say) is an ordinary failure: that call takes the walk. */
static void
probe_openat2(void)
{
#ifdef HAVE_OPENAT2
    int fd = openat2_beneath(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY);

    if (fd >= 0) {
        (void)close(fd);
    } else if (errno == ENOSYS || errno == EPERM || errno == E2BIG ||
               errno == EINVAL) {
        atomic_store(&openat2_on, 0); /* old kernel, seccomp filter */
    }
#else
    atomic_store(&openat2_on, 0);
#endif
}

void
sl__obj_fs_probe_openat2(void)
{
    (void)pthread_once(&openat2_once, probe_openat2);
}

/*
 * Opens "<store>/<the first @nseg segments of @w>" below the root in one
 * openat2 call that follows no symbolic link and cannot leave the root.
 * Returns the fd, or -1 (errno set) when the call failed or is not
 * available: the caller then resolves component by component.
 */
int
sl__obj_fs_fast_open(const struct sl__obj_fs *fs,
                     const char *store,
                     const struct sl__obj_fs_walk *w,
                     size_t nseg,
                     int flags)
{
#ifdef HAVE_OPENAT2
    char path[SL_NAME_MAX + 1 + SL_OBJECT_ID_MAX + 1];
    size_t len = strlen(store);
    size_t i = 0;

    if (!atomic_load_explicit(&openat2_on, memory_order_relaxed) ||
        len > SL_NAME_MAX) {
        errno = ENOSYS;
        return -1;
    }
    memcpy(path, store, len);
    for (i = 0; i < nseg; i++) {
        size_t n = strlen(w->seg[i]);

        if (SL_NEVER(len + 1 + n >= sizeof(path))) {
            errno = ENAMETOOLONG;
            return -1;
        }
        path[len++] = '/';
        memcpy(path + len, w->seg[i], n);
        len += n;
    }
    path[len] = '\0';
    return openat2_beneath(fs->root_fd, path, flags);
#else
    (void)fs;
    (void)store;
    (void)w;
    (void)nseg;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

/* 1 if store @p store is a real directory (not a link to one). */
int
sl__obj_fs_store_is_dir(const struct sl__obj_fs *fs, const char *store)
{
    struct stat st;

    return fstatat(fs->root_fd, store, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(st.st_mode);
}

/*
 * Resolves @p id up to its parent folder in one call: on success the walk
 * holds that folder as its only fd (sl__obj_fs_walk_parent,
 * sl__obj_fs_walk_last work; the folders in between are not open).  Returns 0,
 * or -1 with errno.
 */
int
sl__obj_fs_walk_fast(const struct sl__obj_fs *fs,
                     const char *store,
                     const char *id,
                     struct sl__obj_fs_walk *w)
{
    int fd = -1;

    sl__obj_fs_walk_init(w, id);
    fd =
        sl__obj_fs_fast_open(fs, store, w, w->nseg - 1, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        return -1;
    }
    w->fd[w->nfd++] = fd;
    return 0;
}

/*
 * Opens store @p store as a directory fd.  The store itself must be a real
 * directory: a symbolic link in its place is refused.
 */
int
sl__obj_fs_open_store(const struct sl__obj_fs *fs,
                      const char *store,
                      int *out,
                      struct sl_err *err)
{
    int fd = openat(fs->root_fd, store, DIR_OPEN_FLAGS);
    int e = errno;
    int kind = 0;

    *out = -1;
    if (fd >= 0) {
        *out = fd;
        return 0;
    }
    if (e == ENOENT) {
        return sl_err_set(err, SL_ENOENT, NULL, "no store '%s'", store);
    }
    if (e == ELOOP || e == ENOTDIR) {
        kind = sl__obj_fs_entry_kind(fs->root_fd, store, NULL);
        if (kind == KIND_LINK) {
            return sl_err_set(err,
                              SL_EACCES,
                              NULL,
                              "store '%s' is a symbolic link, which is not "
                              "followed",
                              store);
        }
        return sl_err_set(
            err, SL_ECONFLICT, NULL, "store '%s' is not a directory", store);
    }
    return sl__obj_fs_sys_err(err, e, "cannot open store '%s'", store);
}

/* Opens the store as fd[0] of the walk. */
int
sl__obj_fs_walk_open_store(const struct sl__obj_fs *fs,
                           const char *store,
                           struct sl__obj_fs_walk *w,
                           struct sl_err *err)
{
    int fd = -1;
    int rc = sl__obj_fs_open_store(fs, store, &fd, err);

    if (rc == 0) {
        w->fd[w->nfd++] = fd;
    }
    return rc;
}

/*
 * Explains why folder segment @p i could not be opened: missing, an object
 * (the id conflicts with it), a symbolic link, or a system error.
 */
static int
component_err(const struct sl__obj_fs_walk *w,
              size_t i,
              int e,
              const char *store,
              const char *id,
              struct sl_err *err)
{
    int kind = 0;
    int plen = walk_prefix_len(w, i);

    if (e == ENOENT) {
        return sl_err_set(
            err, SL_ENOENT, NULL, "no object '%s' in store '%s'", id, store);
    }
    if (e == ELOOP || e == ENOTDIR) {
        kind = sl__obj_fs_entry_kind(w->fd[i], w->seg[i], NULL);
        if (kind == KIND_LINK) {
            return sl_err_set(err,
                              SL_EACCES,
                              NULL,
                              "object id '%s' in store '%s': '%.*s' is a "
                              "symbolic link, which is not followed",
                              id,
                              store,
                              plen,
                              id);
        }
        if (kind == KIND_FILE) {
            return sl_err_set(err,
                              SL_ECONFLICT,
                              NULL,
                              "object id '%s' conflicts with object '%.*s' "
                              "in store '%s'",
                              id,
                              plen,
                              id,
                              store);
        }
        return sl_err_set(err,
                          SL_ECONFLICT,
                          NULL,
                          "object id '%s' in store '%s': '%.*s' is not a "
                          "folder",
                          id,
                          store,
                          plen,
                          id);
    }
    return sl__obj_fs_sys_err(
        err, e, "cannot open folder '%.*s' of store '%s'", plen, id, store);
}

/*
 * Opens the folders of @p id below the store (fd[0] must be open), without
 * following links.  With @p create, missing folders are made (racing
 * creators and deleters tolerated; in fsync mode the directory that got a
 * new entry is synced).  Returns SL_ENOENT when a folder is missing and
 * @p create is 0.
 */
int
sl__obj_fs_walk_dirs(const struct sl__obj_fs *fs,
                     const char *store,
                     const char *id,
                     int create,
                     struct sl__obj_fs_walk *w,
                     struct sl_err *err)
{
    size_t i = 0;
    int tries = 0;
    int fd = -1;
    int e = 0;
    int rc = 0;

    for (i = 0; i + 1 < w->nseg; i++) {
        for (tries = 0;; tries++) {
            fd = openat(w->fd[i], w->seg[i], DIR_OPEN_FLAGS);
            if (fd >= 0) {
                break;
            }
            e = errno;
            if (e != ENOENT || !create || tries >= MKDIR_TRIES) {
                return component_err(w, i, e, store, id, err);
            }
            if (mkdirat(w->fd[i], w->seg[i], 0755) != 0) {
                e = errno;
                if (e != EEXIST) {
                    return component_err(w, i, e, store, id, err);
                }
                continue;
            }
            rc = sl__obj_fs_maybe_fsync(fs, w->fd[i], store, id, err);
            if (rc != 0) {
                return rc;
            }
        }
        w->fd[w->nfd++] = fd;
    }
    return 0;
}

/*
 * Resolves @p id up to its parent folder: store, then folders.  On error
 * all fds are closed again.
 */
int
sl__obj_fs_walk_resolve(const struct sl__obj_fs *fs,
                        const char *store,
                        const char *id,
                        int create,
                        struct sl__obj_fs_walk *w,
                        struct sl_err *err)
{
    int rc = 0;

    sl__obj_fs_walk_init(w, id);
    rc = sl__obj_fs_walk_open_store(fs, store, w, err);
    if (rc != 0) {
        goto fail;
    }
    rc = sl__obj_fs_walk_dirs(fs, store, id, create, w, err);
    if (rc != 0) {
        goto fail;
    }
    return 0;
fail:
    sl__obj_fs_walk_close(w);
    return rc;
}

/*
 * The error for an entry that is neither absent, a file nor a folder: a
 * link (never followed), something else (fifo, device: @other_code), or a
 * failed stat (negative errno in @kind).
 */
static int
kind_error(int kind,
           int other_code,
           const char *store,
           const char *id,
           struct sl_err *err)
{
    if (kind == KIND_LINK) {
        return sl_err_set(err,
                          SL_EACCES,
                          NULL,
                          "object '%s' in store '%s' is a symbolic link, "
                          "which is not followed",
                          id,
                          store);
    }
    if (kind == KIND_OTHER) {
        return sl_err_set(err,
                          other_code,
                          NULL,
                          "object '%s' in store '%s' is not a regular file",
                          id,
                          store);
    }
    return sl__obj_fs_sys_err(
        err, -kind, "cannot stat object '%s' in store '%s'", id, store);
}

/*
 * Checks that the last segment can be read as an object: a regular file.
 * A folder is reported as "no object" (404), a link as access denied.
 */
int
sl__obj_fs_check_readable(const struct sl__obj_fs_walk *w,
                          const char *store,
                          const char *id,
                          struct stat *st,
                          struct sl_err *err)
{
    int kind = sl__obj_fs_entry_kind(
        sl__obj_fs_walk_parent(w), sl__obj_fs_walk_last(w), st);

    switch (kind) {
    case KIND_FILE:
        return 0;
    case KIND_NONE:
        return sl_err_set(
            err, SL_ENOENT, NULL, "no object '%s' in store '%s'", id, store);
    case KIND_DIR:
        return sl_err_set(err,
                          SL_ENOENT,
                          NULL,
                          "no object '%s' in store '%s' (it is a folder of "
                          "other objects)",
                          id,
                          store);
    default:
        return kind_error(kind, SL_EACCES, store, id, err);
    }
}

/*
 * Checks that the last segment may be (re)placed by a new object: absent
 * or a regular file (*existed tells which).  A folder there means the id
 * is a prefix of other objects: conflict.
 */
int
sl__obj_fs_check_writable(const struct sl__obj_fs_walk *w,
                          const char *store,
                          const char *id,
                          int *existed,
                          struct sl_err *err)
{
    int kind = sl__obj_fs_entry_kind(
        sl__obj_fs_walk_parent(w), sl__obj_fs_walk_last(w), NULL);

    *existed = 0;
    switch (kind) {
    case KIND_NONE:
        return 0;
    case KIND_FILE:
        *existed = 1;
        return 0;
    case KIND_DIR:
        return sl_err_set(err,
                          SL_ECONFLICT,
                          NULL,
                          "object id '%s' conflicts with objects under "
                          "'%s/' in store '%s'",
                          id,
                          id,
                          store);
    default:
        return kind_error(kind, SL_ECONFLICT, store, id, err);
    }
}
