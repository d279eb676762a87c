/*
 * Filesystem backend of the object store (docs/objectstore.md).
 *
 * Layout: store S is the directory <root>/S, object a/b/c of S is the file
 * <root>/S/a/b/c, and writers write shadow files in <root>/.tmp/ that are
 * renamed into place on commit.  Store names cannot start with '.', so
 * .tmp never clashes with a store.
 *
 * Safety: names are checked by objectstore.c before they get here; paths
 * are then resolved one component at a time with openat(O_NOFOLLOW |
 * O_DIRECTORY) from the root fd, so a symbolic link planted anywhere in a
 * store is never followed (it gives an error, and listings skip it).
 * Where the kernel has openat2 (Linux 5.6), the common cases (open,
 * stat, commit of an object whose folders exist) resolve the whole path
 * in one call with RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH, the same
 * guarantee in one system call instead of one open and one close per
 * component; anything that call refuses goes the component way, which
 * also words the error.
 *
 * Threading: struct fs is immutable after sl__obj_fs_new (two fds, the
 * root path for messages, the durability), so any number of threads may
 * use it at once.  Its one lock only orders commits (shared) against the
 * removal of emptied folders by deletes (exclusive), which would otherwise
 * remove a folder between a commit's mkdir and its rename.  Writers and
 * readers belong to one thread at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_openat2) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif
#endif

#include "objectstore/objectstore_int.h"

#define TMP_DIR        ".tmp" /* shadow files, under the root */
#define COMMIT_TRIES   50     /* renames retried when a parent vanished */
#define MKDIR_TRIES    5      /* mkdir+open retried against deleters */
#define MAX_DEPTH      (SL_OBJECT_ID_MAX / 2 + 1) /* segments of an id */
#define RM_MAX_DEPTH   (MAX_DEPTH + 8) /* recursion bound of rm_tree */
#define DIR_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct fs {
    char *root;                    /* root path, for messages only */
    int root_fd;                   /* the root, O_DIRECTORY */
    int tmp_fd;                    /* <root>/.tmp */
    enum sl_durability durability; /* fsync on commit or not */
    pthread_rwlock_t folders;      /* commits shared, folder removal alone */
    int lock_ready;                /* folders was initialised */
};

struct fs_writer {
    struct fs *fs;   /* borrowed, outlives the writer */
    int fd;          /* the shadow file, -1 once closed */
    int sealed;      /* 1 after the seal: written, fd closed */
    int committed;   /* 1 after the rename */
    int shared;      /* the shadow is a hard link of a caller's file */
    char shadow[37]; /* shadow file name in .tmp (a UUID) */
    char *store;     /* copies, for the commit and messages */
    char *id;
};

struct fs_reader {
    int fd;      /* the object file */
    char *store; /* copies, for messages */
    char *id;
};

/* What a directory entry is, looked at without following links. */
enum kind {
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
struct walk {
    char buf[SL_OBJECT_ID_MAX + 1]; /* the id, '/' replaced by NUL */
    const char *seg[MAX_DEPTH];     /* segments, pointing into buf */
    size_t nseg;                    /* number of segments */
    int fd[MAX_DEPTH];              /* open directories */
    size_t nfd;                     /* number of open fds */
};

/* ------------------------------------------------------------------------
 * Errors
 * --------------------------------------------------------------------- */

/* The system's text for @p errnum, thread-safe. */
static const char *
errtext(int errnum, char *buf, size_t cap)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(errnum, buf, cap);
#else
    if (strerror_r(errnum, buf, cap) != 0) {
        (void)snprintf(buf, cap, "error %d", errnum);
    }
    return buf;
#endif
}

static int sys_err(struct sl_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Maps @p errnum at the edge and fills @p err with "<what>: <strerror>",
 * where <what> names the store and the object.
 */
static int
sys_err(struct sl_err *err, int errnum, const char *fmt, ...)
{
    char what[400];
    char text[128];
    va_list ap;
    int code = sl_err_from_errno(errnum);

    if (err == NULL) {
        return code;
    }
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return sl_err_set(
        err, code, NULL, "%s: %s", what, errtext(errnum, text, sizeof(text)));
}

/* ------------------------------------------------------------------------
 * Small helpers
 * --------------------------------------------------------------------- */

/* Lock failures mean corrupted state (STYLE 17): panic. */
static void
folders_lock(struct fs *fs, int exclusive)
{
    int e = exclusive ? pthread_rwlock_wrlock(&fs->folders)
                      : pthread_rwlock_rdlock(&fs->folders);

    if (e != 0) {
        sl_panic("object store folder lock failed: %d", e);
    }
}

static void
folders_unlock(struct fs *fs)
{
    int e = pthread_rwlock_unlock(&fs->folders);

    if (e != 0) {
        sl_panic("object store folder unlock failed: %d", e);
    }
}

static void
close_fd(int *fd)
{
    if (*fd >= 0) {
        (void)close(*fd);
        *fd = -1;
    }
}

/* Kind of entry @p name in @p dirfd; -errno on errors other than ENOENT. */
static int
entry_kind(int dirfd, const char *name, struct stat *st)
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

static int64_t
mtime_ms(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* fsync @p fd in fsync durability mode only; @p what names it. */
static int
maybe_fsync(const struct fs *fs,
            int fd,
            const char *store,
            const char *id,
            struct sl_err *err)
{
    if (fs->durability != SL_DURABILITY_FSYNC) {
        return 0;
    }
    if (fsync(fd) != 0) {
        return sys_err(err,
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

static void
walk_init(struct walk *w, const char *id)
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

static void
walk_close(struct walk *w)
{
    while (w->nfd > 0) {
        w->nfd--;
        close_fd(&w->fd[w->nfd]);
    }
}

/* The innermost open directory: the parent of the last segment when the
 * whole walk succeeded. */
static int
walk_parent(const struct walk *w)
{
    return w->fd[w->nfd - 1];
}

static const char *
walk_last(const struct walk *w)
{
    return w->seg[w->nseg - 1];
}

/* Length of the id prefix made of segments 0..i (for messages). */
static int
walk_prefix_len(const struct walk *w, size_t i)
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

/*
 * Opens "<store>/<the first @nseg segments of @w>" below the root in one
 * openat2 call that follows no symbolic link and cannot leave the root.
 * Returns the fd, or -1 (errno set) when the call failed or is not
 * available: the caller then resolves component by component.
 */
static int
fast_open(const struct fs *fs,
          const char *store,
          const struct walk *w,
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
static int
store_is_dir(const struct fs *fs, const char *store)
{
    struct stat st;

    return fstatat(fs->root_fd, store, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(st.st_mode);
}

/*
 * Resolves @p id up to its parent folder in one call: on success the walk
 * holds that folder as its only fd (walk_parent, walk_last work; the
 * folders in between are not open).  Returns 0, or -1 with errno.
 */
static int
walk_fast(const struct fs *fs,
          const char *store,
          const char *id,
          struct walk *w)
{
    int fd = -1;

    walk_init(w, id);
    fd = fast_open(fs, store, w, w->nseg - 1, O_RDONLY | O_DIRECTORY);
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
static int
open_store(const struct fs *fs, const char *store, int *out, struct sl_err *err)
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
        kind = entry_kind(fs->root_fd, store, NULL);
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
    return sys_err(err, e, "cannot open store '%s'", store);
}

/* Opens the store as fd[0] of the walk. */
static int
walk_open_store(const struct fs *fs,
                const char *store,
                struct walk *w,
                struct sl_err *err)
{
    int fd = -1;
    int rc = open_store(fs, store, &fd, err);

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
component_err(const struct walk *w,
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
        kind = entry_kind(w->fd[i], w->seg[i], NULL);
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
    return sys_err(
        err, e, "cannot open folder '%.*s' of store '%s'", plen, id, store);
}

/*
 * Opens the folders of @p id below the store (fd[0] must be open), without
 * following links.  With @p create, missing folders are made (racing
 * creators and deleters tolerated; in fsync mode the directory that got a
 * new entry is synced).  Returns SL_ENOENT when a folder is missing and
 * @p create is 0.
 */
static int
walk_dirs(const struct fs *fs,
          const char *store,
          const char *id,
          int create,
          struct walk *w,
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
            rc = maybe_fsync(fs, w->fd[i], store, id, err);
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
static int
walk_resolve(const struct fs *fs,
             const char *store,
             const char *id,
             int create,
             struct walk *w,
             struct sl_err *err)
{
    int rc = 0;

    walk_init(w, id);
    rc = walk_open_store(fs, store, w, err);
    if (rc != 0) {
        goto fail;
    }
    rc = walk_dirs(fs, store, id, create, w, err);
    if (rc != 0) {
        goto fail;
    }
    return 0;
fail:
    walk_close(w);
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
    return sys_err(
        err, -kind, "cannot stat object '%s' in store '%s'", id, store);
}

/*
 * Checks that the last segment can be read as an object: a regular file.
 * A folder is reported as "no object" (404), a link as access denied.
 */
static int
check_readable(const struct walk *w,
               const char *store,
               const char *id,
               struct stat *st,
               struct sl_err *err)
{
    int kind = entry_kind(walk_parent(w), walk_last(w), st);

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
static int
check_writable(const struct walk *w,
               const char *store,
               const char *id,
               int *existed,
               struct sl_err *err)
{
    int kind = entry_kind(walk_parent(w), walk_last(w), NULL);

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

/* ------------------------------------------------------------------------
 * Recursive removal
 * --------------------------------------------------------------------- */

/*
 * Removes everything inside the directory open as @p fd (taken over and
 * closed) without following links: unlinkat removes a link itself, and
 * only real directories (opened O_NOFOLLOW) are descended.  Passes repeat
 * until one removes nothing, since readdir may miss entries while the
 * directory changes.  Returns 0 or the first -errno of the last pass.
 */
static int
rm_contents(int fd, int depth)
{
    DIR *d = NULL;
    struct dirent *de = NULL;
    int first = 0;
    int removed = 0;
    int sub = -1;
    int rc = 0;

    d = fdopendir(fd);
    if (d == NULL) {
        rc = -errno;
        (void)close(fd);
        return rc;
    }
    do {
        removed = 0;
        first = 0;
        rewinddir(d);
        for (;;) {
            errno = 0;
            de = readdir(d);
            if (de == NULL) {
                break;
            }
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
                continue;
            }
            if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
                removed++;
                continue;
            }
            if (errno != EISDIR && errno != EPERM) {
                first = first != 0 ? first : -errno;
                continue;
            }
            sub = openat(dirfd(d), de->d_name, DIR_OPEN_FLAGS);
            if (sub < 0 || depth >= RM_MAX_DEPTH) {
                first = first != 0 ? first : (sub < 0 ? -errno : -ELOOP);
                close_fd(&sub);
                continue;
            }
            rc = rm_contents(sub, depth + 1);
            sub = -1;
            first = first != 0 ? first : rc;
            if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0) {
                removed++;
            } else {
                first = first != 0 ? first : -errno;
            }
        }
    } while (removed > 0);
    (void)closedir(d);
    return first;
}

/* ------------------------------------------------------------------------
 * Service
 * --------------------------------------------------------------------- */

static void
fs_close(void *ctx)
{
    struct fs *fs = ctx;

    if (fs == NULL) {
        return;
    }
    close_fd(&fs->root_fd);
    close_fd(&fs->tmp_fd);
    if (fs->lock_ready) {
        (void)pthread_rwlock_destroy(&fs->folders);
    }
    sl_free(fs->root);
    sl_free(fs);
}

int
sl__obj_fs_new(const char *root,
               enum sl_durability durability,
               void **ctx,
               struct sl_err *err)
{
    struct fs *fs = NULL;
    pthread_rwlockattr_t attr;
    int sweep_fd = -1;
    int rc = 0;

    *ctx = NULL;
    fs = sl_calloc(1, sizeof(*fs));
    fs->root = sl_strdup(root);
    fs->root_fd = -1;
    fs->tmp_fd = -1;
    fs->durability = durability;
    /* Writer preference, so deletes' folder clean-up is not starved by a
     * steady stream of commits. */
    if (pthread_rwlockattr_init(&attr) != 0 ||
        pthread_rwlockattr_setkind_np(
            &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) != 0 ||
        pthread_rwlock_init(&fs->folders, &attr) != 0) {
        rc = sl_err_set(err, SL_EIO, NULL, "cannot create a lock");
        goto fail;
    }
    (void)pthread_rwlockattr_destroy(&attr);
    fs->lock_ready = 1;
    rc = sl_mkdirs(root, err);
    if (rc != 0) {
        goto fail;
    }
    fs->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs->root_fd < 0) {
        rc = sys_err(err, errno, "cannot open object store root '%s'", root);
        goto fail;
    }
    if (mkdirat(fs->root_fd, TMP_DIR, 0700) != 0 && errno != EEXIST) {
        rc = sys_err(err, errno, "cannot create '%s/" TMP_DIR "'", root);
        goto fail;
    }
    fs->tmp_fd = openat(fs->root_fd, TMP_DIR, DIR_OPEN_FLAGS);
    if (fs->tmp_fd < 0) {
        rc = sys_err(err, errno, "cannot open '%s/" TMP_DIR "'", root);
        goto fail;
    }
    (void)pthread_once(&openat2_once, probe_openat2);
    /* One process per root: the sweep below would delete the shadow files
     * of another live server.  The lock goes with tmp_fd at close or death. */
    if (flock(fs->tmp_fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK
                 ? sl_err_set(err,
                              SL_ECONFLICT,
                              NULL,
                              "object store root '%s' is in use by another "
                              "process",
                              root)
                 : sys_err(err, errno, "cannot lock '%s/" TMP_DIR "'", root);
        goto fail;
    }
    /* Shadow files of writers that died before commit, and stores whose
     * deletion was interrupted: nothing in .tmp is visible, all of it goes. */
    sweep_fd = dup(fs->tmp_fd);
    if (sweep_fd < 0) {
        rc = sys_err(err, errno, "cannot sweep '%s/" TMP_DIR "'", root);
        goto fail;
    }
    rc = rm_contents(sweep_fd, 0);
    if (rc != 0) {
        rc = sys_err(err, -rc, "cannot sweep '%s/" TMP_DIR "'", root);
        goto fail;
    }
    *ctx = fs;
    return 0;
fail:
    fs_close(fs);
    return rc;
}

/* ------------------------------------------------------------------------
 * Stores
 * --------------------------------------------------------------------- */

static int
fs_store_create(void *ctx, const char *store, int *created, struct sl_err *err)
{
    const struct fs *fs = ctx;
    int kind = 0;

    *created = 0;
    if (mkdirat(fs->root_fd, store, 0755) == 0) {
        *created = 1;
        if (fs->durability == SL_DURABILITY_FSYNC && fsync(fs->root_fd) != 0) {
            return sys_err(err, errno, "cannot fsync for store '%s'", store);
        }
        return 0;
    }
    if (errno != EEXIST) {
        return sys_err(err, errno, "cannot create store '%s'", store);
    }
    kind = entry_kind(fs->root_fd, store, NULL);
    if (kind == KIND_DIR) {
        return 0;
    }
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

/*
 * Moves the store into .tmp first, so it disappears at once and a crash
 * half-way leaves nothing visible (the next open sweeps the rest), then
 * removes the tree without following links.
 */
static int
fs_store_delete(void *ctx, const char *store, struct sl_err *err)
{
    struct fs *fs = ctx;
    char trash[48];
    char uuid[37];
    int fd = -1;
    int rc = 0;

    rc = open_store(fs, store, &fd, err);
    if (rc != 0) {
        return rc;
    }
    close_fd(&fd);
    sl_uuid(uuid);
    (void)snprintf(trash, sizeof(trash), "del-%s", uuid);
    folders_lock(fs, 1);
    rc = renameat(fs->root_fd, store, fs->tmp_fd, trash) != 0 ? errno : 0;
    folders_unlock(fs);
    if (rc != 0) {
        errno = rc;
        if (errno == ENOENT) {
            return sl_err_set(err, SL_ENOENT, NULL, "no store '%s'", store);
        }
        return sys_err(err, errno, "cannot delete store '%s'", store);
    }
    if (fs->durability == SL_DURABILITY_FSYNC && fsync(fs->root_fd) != 0) {
        return sys_err(err, errno, "cannot fsync for store '%s'", store);
    }
    fd = openat(fs->tmp_fd, trash, DIR_OPEN_FLAGS);
    rc = fd < 0 ? -errno : rm_contents(fd, 0);
    if (rc == 0 && unlinkat(fs->tmp_fd, trash, AT_REMOVEDIR) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        /* The store is gone; only disk space waits for the next sweep. */
        char text[128];

        SL_WARN("store '%s' deleted, but removing its files from '%s/" TMP_DIR
                "/%s' failed: %s",
                store,
                fs->root,
                trash,
                errtext(-rc, text, sizeof(text)));
    }
    return 0;
}

static int
fs_store_exists(void *ctx, const char *store, struct sl_err *err)
{
    const struct fs *fs = ctx;
    int fd = -1;
    int rc = 0;

    rc = open_store(fs, store, &fd, err);
    close_fd(&fd);
    return rc;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Reads the root once, keeps the names of real directories that are valid
 * store names (.tmp is not), sorts them bytewise and calls back.
 */
static int
fs_store_list(void *ctx,
              int (*cb)(void *cb_ctx, const char *store),
              void *cb_ctx,
              struct sl_err *err)
{
    const struct fs *fs = ctx;
    DIR *d = NULL;
    struct dirent *de = NULL;
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    size_t i = 0;
    int fd = -1;
    int rc = 0;

    fd = openat(fs->root_fd, ".", DIR_OPEN_FLAGS);
    d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        rc = sys_err(err, errno, "cannot list stores in '%s'", fs->root);
        close_fd(&fd);
        goto out;
    }
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            break;
        }
        if (sl_name_check_store(de->d_name, NULL) != 0) {
            continue;
        }
        if (de->d_type != DT_DIR &&
            (de->d_type != DT_UNKNOWN ||
             entry_kind(dirfd(d), de->d_name, NULL) != KIND_DIR)) {
            continue;
        }
        if (n == cap) {
            cap = cap == 0 ? 16 : cap * 2;
            names = sl_realloc(names, cap * sizeof(*names));
        }
        names[n++] = sl_strdup(de->d_name);
    }
    if (errno != 0) {
        rc = sys_err(err, errno, "cannot list stores in '%s'", fs->root);
        goto out;
    }
    if (n > 0) {
        qsort(names, n, sizeof(*names), cmp_str);
    }
    for (i = 0; i < n && rc == 0; i++) {
        rc = cb(cb_ctx, names[i]);
    }
out:
    if (d != NULL) {
        (void)closedir(d);
    }
    for (i = 0; i < n; i++) {
        sl_free(names[i]);
    }
    sl_free(names);
    return rc;
}

/* ------------------------------------------------------------------------
 * Listing
 * --------------------------------------------------------------------- */

/* One directory entry while listing. */
struct entry {
    char *key;  /* name, with '/' appended for folders */
    size_t len; /* strlen(key) */
    int is_dir; /* 1 for a folder */
};

struct list_ctx {
    const char *store;
    const char *prefix; /* "" for all */
    size_t prefix_len;
    int (*cb)(void *cb_ctx, const struct sl_obj_info *info);
    void *cb_ctx;
    struct sl_err *err;
    char path[SL_OBJECT_ID_MAX + 2]; /* id of the current entry */
};

static int
cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->key,
                  ((const struct entry *)b)->key);
}

static void
free_entries(struct entry *e, size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        sl_free(e[i].key);
    }
    sl_free(e);
}

/*
 * Reads one directory: regular files and real folders whose names are
 * valid id segments (links and anything else are skipped), sorted by name
 * with '/' appended to folders.  That order is the byte order of the full
 * ids: every id under folder "x" starts with "x/", so comparing "x/" with
 * a sibling's name ranks the whole subtree correctly ("a-b" < "a/x").
 */
static int
read_entries(struct list_ctx *lc, int fd, struct entry **out, size_t *count)
{
    DIR *d = NULL;
    struct dirent *de = NULL;
    struct entry *e = NULL;
    size_t n = 0;
    size_t cap = 0;
    int dupfd = -1;
    int is_dir = 0;
    int kind = 0;
    int rc = 0;

    dupfd = dup(fd);
    d = dupfd < 0 ? NULL : fdopendir(dupfd);
    if (d == NULL) {
        rc = sys_err(lc->err,
                     errno,
                     "cannot list folder '%s' of store '%s'",
                     lc->path,
                     lc->store);
        close_fd(&dupfd);
        goto out;
    }
    rewinddir(d);
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            break;
        }
        if (sl_name_check_object_id(de->d_name, NULL) != 0) {
            continue; /* ".", "..", or a name no id can have */
        }
        kind = de->d_type == DT_DIR   ? KIND_DIR
               : de->d_type == DT_REG ? KIND_FILE
               : de->d_type == DT_UNKNOWN
                   ? entry_kind(dirfd(d), de->d_name, NULL)
                   : KIND_OTHER;
        if (kind != KIND_DIR && kind != KIND_FILE) {
            continue;
        }
        is_dir = kind == KIND_DIR;
        if (n == cap) {
            cap = cap == 0 ? 32 : cap * 2;
            e = sl_realloc(e, cap * sizeof(*e));
        }
        e[n].key =
            is_dir ? sl_asprintf("%s/", de->d_name) : sl_strdup(de->d_name);
        e[n].len = strlen(e[n].key);
        e[n].is_dir = is_dir;
        n++;
    }
    if (errno != 0) {
        rc = sys_err(lc->err,
                     errno,
                     "cannot list folder '%s' of store '%s'",
                     lc->path,
                     lc->store);
        goto out;
    }
    if (n > 0) {
        qsort(e, n, sizeof(*e), cmp_entry);
    }
out:
    if (d != NULL) {
        (void)closedir(d);
    }
    if (rc != 0) {
        free_entries(e, n);
        e = NULL;
        n = 0;
    }
    *out = e;
    *count = n;
    return rc;
}

/*
 * 1 if the path of length @p len can lead to ids with the prefix: for a
 * folder, one of the two is a prefix of the other; for an object, the
 * prefix is a prefix of the id.
 */
static int
prefix_match(const struct list_ctx *lc, size_t len, int is_dir)
{
    size_t m = len < lc->prefix_len ? len : lc->prefix_len;

    if (!is_dir && len < lc->prefix_len) {
        return 0;
    }
    return memcmp(lc->path, lc->prefix, m) == 0;
}

/* Calls back for one object found by the walk; raced deletions skipped. */
static int
list_object(struct list_ctx *lc, int fd, const char *name)
{
    struct sl_obj_info info;
    struct stat st;
    int kind = entry_kind(fd, name, &st);

    if (kind < 0) {
        return sys_err(lc->err,
                       -kind,
                       "cannot stat object '%s' in store '%s'",
                       lc->path,
                       lc->store);
    }
    if (kind != KIND_FILE) {
        return 0;
    }
    info.id = lc->path;
    info.size = (uint64_t)st.st_size;
    info.mtime_ms = mtime_ms(&st);
    return lc->cb(lc->cb_ctx, &info);
}

/*
 * Depth-first walk of the folder open as @p fd, whose id prefix is
 * lc->path[0..len).  Holds one sorted listing per level of the current
 * path; folders that cannot match the prefix are not entered, and the
 * walk of a level stops once it has left the prefix's range.
 */
static int
list_dir(struct list_ctx *lc, int fd, size_t len)
{
    struct entry *e = NULL;
    size_t n = 0;
    size_t i = 0;
    size_t new_len = 0;
    int matched = 0;
    int sub = -1;
    int rc = 0;

    lc->path[len] = '\0';
    rc = read_entries(lc, fd, &e, &n);
    if (rc != 0) {
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        new_len = len + e[i].len;
        if (new_len > SL_OBJECT_ID_MAX) {
            continue; /* no valid id is that long */
        }
        memcpy(lc->path + len, e[i].key, e[i].len + 1);
        if (!prefix_match(lc, new_len, e[i].is_dir)) {
            if (matched) {
                break; /* sorted: nothing further can match */
            }
            continue;
        }
        matched = 1;
        if (!e[i].is_dir) {
            rc = list_object(lc, fd, e[i].key);
            continue;
        }
        lc->path[new_len - 1] = '\0';
        sub = openat(fd, lc->path + len, DIR_OPEN_FLAGS);
        lc->path[new_len - 1] = '/';
        if (sub < 0) {
            if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) {
                continue; /* removed or replaced meanwhile */
            }
            rc = sys_err(lc->err,
                         errno,
                         "cannot open folder '%s' of store '%s'",
                         lc->path,
                         lc->store);
            continue;
        }
        rc = list_dir(lc, sub, new_len);
        close_fd(&sub);
    }
    free_entries(e, n);
    return rc;
}

/*
 * List lc->prefix in the store open as @p store_fd.  The folders the
 * prefix names in full ("a/b/" of "a/b/c") are opened directly, as an
 * object id's are, instead of reading every level's listing on the way:
 * the jobmanager lists the outputs of each finished task with a prefix
 * ending in its own folder, next to every other task's folder of the run
 * (docs/objectstore.md).  A prefix whose folder part is no valid id path
 * ("..", empty segments) is walked level by level as before, where such
 * names never match.
 */
static int
list_from_prefix_dir(const struct fs *fs, struct list_ctx *lc, int store_fd)
{
    const char *slash = strrchr(lc->prefix, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - lc->prefix) + 1 : 0;
    char probe[SL_OBJECT_ID_MAX + 2];
    struct walk w;
    int rc = 0;

    if (dir_len == 0 || dir_len + 1 >= sizeof(probe)) {
        return list_dir(lc, store_fd, 0);
    }
    /* the folders must form a valid id with a last segment added */
    memcpy(probe, lc->prefix, dir_len);
    probe[dir_len] = 'x';
    probe[dir_len + 1] = '\0';
    if (sl_name_check_object_id(probe, NULL) != 0) {
        return list_dir(lc, store_fd, 0);
    }
    walk_init(&w, probe);
    {
        int fd =
            fast_open(fs, lc->store, &w, w.nseg - 1, O_RDONLY | O_DIRECTORY);

        if (fd >= 0) {
            memcpy(lc->path, lc->prefix, dir_len);
            rc = list_dir(lc, fd, dir_len);
            close_fd(&fd);
            return rc;
        }
    }
    w.fd[w.nfd++] = store_fd; /* borrowed: not closed below */
    rc = walk_dirs(fs, lc->store, probe, 0, &w, NULL);
    if (rc == 0) {
        memcpy(lc->path, lc->prefix, dir_len);
        rc = list_dir(lc, walk_parent(&w), dir_len);
    } else if (rc == SL_ENOENT || rc == SL_ECONFLICT) {
        rc = 0; /* a folder is missing or is an object: nothing to list */
    } else if (rc == SL_EACCES) {
        rc = 0; /* a symbolic link: never followed, so nothing below it */
    } else {
        rc = list_dir(lc, store_fd, 0); /* report it the usual way */
    }
    w.fd[0] = -1;
    walk_close(&w);
    return rc;
}

static int
fs_list(void *ctx,
        const char *store,
        const char *prefix,
        int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
        void *cb_ctx,
        struct sl_err *err)
{
    const struct fs *fs = ctx;
    struct list_ctx *lc = NULL;
    int fd = -1;
    int rc = 0;

    rc = open_store(fs, store, &fd, err);
    if (rc != 0) {
        return rc;
    }
    lc = sl_calloc(1, sizeof(*lc));
    lc->store = store;
    lc->prefix = prefix;
    lc->prefix_len = strlen(prefix);
    lc->cb = cb;
    lc->cb_ctx = cb_ctx;
    lc->err = err;
    if (lc->prefix_len <= SL_OBJECT_ID_MAX) {
        rc = list_from_prefix_dir(fs, lc, fd);
    }
    sl_free(lc);
    close_fd(&fd);
    return rc;
}

/* ------------------------------------------------------------------------
 * Objects
 * --------------------------------------------------------------------- */

static int
fs_stat(void *ctx,
        const char *store,
        const char *id,
        struct sl_obj_info *info,
        struct sl_err *err)
{
    const struct fs *fs = ctx;
    struct walk w;
    struct stat st;
    int rc = 0;

    if (walk_fast(fs, store, id, &w) != 0) {
        rc = walk_resolve(fs, store, id, 0, &w, err);
        if (rc != 0) {
            return rc;
        }
    }
    rc = check_readable(&w, store, id, &st, err);
    if (rc == 0) {
        info->size = (uint64_t)st.st_size;
        info->mtime_ms = mtime_ms(&st);
    }
    walk_close(&w);
    return rc;
}

/*
 * Unlinks the object, then the folders it leaves empty, innermost first,
 * up to but not including the store; a folder that is not empty (or gone)
 * ends that quietly.
 */
static int
fs_delete(void *ctx, const char *store, const char *id, struct sl_err *err)
{
    struct fs *fs = ctx;
    struct walk w;
    size_t i = 0;
    int rc = 0;

    rc = walk_resolve(fs, store, id, 0, &w, err);
    if (rc != 0) {
        return rc;
    }
    rc = check_readable(&w, store, id, NULL, err);
    if (rc != 0) {
        goto out;
    }
    if (unlinkat(walk_parent(&w), walk_last(&w), 0) != 0) {
        if (errno == ENOENT) {
            rc = sl_err_set(err,
                            SL_ENOENT,
                            NULL,
                            "no object '%s' in store '%s'",
                            id,
                            store);
        } else {
            rc = sys_err(err,
                         errno,
                         "cannot delete object '%s' in store '%s'",
                         id,
                         store);
        }
        goto out;
    }
    folders_lock(fs, 1);
    for (i = w.nfd - 1; i > 0; i--) {
        if (unlinkat(w.fd[i - 1], w.seg[i - 1], AT_REMOVEDIR) != 0) {
            break;
        }
    }
    folders_unlock(fs);
    rc = maybe_fsync(fs, w.fd[i], store, id, err);
out:
    walk_close(&w);
    return rc;
}

/* ------------------------------------------------------------------------
 * Writers
 * --------------------------------------------------------------------- */

static void
fs_writer_free(void *wctx)
{
    struct fs_writer *fw = wctx;

    if (fw == NULL) {
        return;
    }
    if (fw->fd >= 0 || fw->sealed) {
        close_fd(&fw->fd);
        if (!fw->committed) {
            (void)unlinkat(fw->fs->tmp_fd, fw->shadow, 0);
        }
    }
    sl_free(fw->store);
    sl_free(fw->id);
    sl_free(fw);
}

/*
 * A new writer for @p id: checks for conflicts as far as the folders exist
 * (a missing folder cannot conflict), so the HTTP layer can answer 409
 * before reading a body, and picks the shadow name; nothing is created.
 */
static int
writer_new(struct fs *fs,
           const char *store,
           const char *id,
           struct fs_writer **out,
           struct sl_err *err)
{
    struct fs_writer *fw = NULL;
    struct walk w;
    int existed = 0;
    int rc = 0;

    if (walk_fast(fs, store, id, &w) == 0) {
        rc = check_writable(&w, store, id, &existed, err);
    } else if (errno == ENOENT && store_is_dir(fs, store)) {
        /* a folder is missing, and those before it are real folders
         * (openat2 followed no link): nothing can conflict yet */
        rc = 0;
    } else {
        walk_init(&w, id);
        rc = walk_open_store(fs, store, &w, err);
        if (rc == 0) {
            rc = walk_dirs(fs, store, id, 0, &w, err);
        }
        if (rc == 0) {
            rc = check_writable(&w, store, id, &existed, err);
        } else if (rc == SL_ENOENT && w.nfd > 0) {
            sl_err_clear(err);
            rc = 0;
        }
    }
    walk_close(&w);
    if (rc != 0) {
        return rc;
    }
    fw = sl_calloc(1, sizeof(*fw));
    fw->fs = fs;
    fw->fd = -1;
    fw->store = sl_strdup(store);
    fw->id = sl_strdup(id);
    sl_uuid(fw->shadow);
    *out = fw;
    return 0;
}

static int
fs_writer_open(void *ctx,
               const char *store,
               const char *id,
               void **wctx,
               struct sl_err *err)
{
    struct fs *fs = ctx;
    struct fs_writer *fw = NULL;
    int rc = writer_new(fs, store, id, &fw, err);

    if (rc != 0) {
        return rc;
    }
    fw->fd = openat(fs->tmp_fd,
                    fw->shadow,
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    0644);
    if (fw->fd < 0) {
        rc = sys_err(err,
                     errno,
                     "cannot create shadow file for object '%s' in store '%s'",
                     id,
                     store);
        fs_writer_free(fw);
        return rc;
    }
    *wctx = fw;
    return 0;
}

/*
 * A sealed writer whose shadow file is a hard link of the regular file
 * open as @p fd, made through /proc/self/fd (linkat's AT_EMPTY_PATH would
 * need a privilege).  Where that fails (a file with no name left, another
 * filesystem, no /proc) nothing is created and it returns 1: the caller
 * copies.
 */
static int
fs_writer_open_file(void *ctx,
                    const char *store,
                    const char *id,
                    int fd,
                    void **wctx,
                    struct sl_err *err)
{
    struct fs *fs = ctx;
    struct fs_writer *fw = NULL;
    struct stat st;
    char path[48];
    int rc = 0;

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return 1;
    }
    rc = writer_new(fs, store, id, &fw, err);
    if (rc == 0) {
        /* durable before it is published, as a written object is */
        rc = maybe_fsync(fs, fd, store, id, err);
    }
    if (rc != 0) {
        fs_writer_free(fw);
        return rc;
    }
    (void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, path, fs->tmp_fd, fw->shadow, AT_SYMLINK_FOLLOW) !=
        0) {
        SL_DEBUG("object store: object '%s' of store '%s' is copied, not "
                 "linked: %s",
                 id,
                 store,
                 sl_errno_str(errno));
        fs_writer_free(fw);
        return 1;
    }
    fw->sealed = 1;
    fw->shared = 1;
    *wctx = fw;
    return 0;
}

static int
fs_writer_write(void *wctx, const void *data, size_t len, struct sl_err *err)
{
    struct fs_writer *fw = wctx;
    const char *p = data;
    ssize_t n = 0;

    while (len > 0) {
        n = write(fw->fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == ENOSPC || errno == EDQUOT)) {
            return sl_err_set(err,
                              SL_ENOSPC,
                              NULL,
                              "no space left writing object '%s' to store "
                              "'%s'",
                              fw->id,
                              fw->store);
        }
        if (n <= 0) {
            return sys_err(err,
                           n < 0 ? errno : EIO,
                           "cannot write object '%s' to store '%s'",
                           fw->id,
                           fw->store);
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/*
 * One attempt at publishing: resolve (creating folders), re-check the
 * conflict rule, rename the shadow file over the id, all under the shared
 * folder lock so no delete of this process removes a folder meanwhile.
 * Returns 1 when a folder vanished anyway (ENOENT from mkdirat or
 * renameat, e.g. another process) and the attempt may be retried.
 */
static int
commit_once(struct fs_writer *fw,
            int *replaced,
            int attempt,
            struct sl_err *err)
{
    struct fs *fs = fw->fs;
    int last = attempt + 1 == COMMIT_TRIES;
    struct walk w;
    int e = 0;
    int rc = 0;

    folders_lock(fs, 0);
    if (walk_fast(fs, fw->store, fw->id, &w) == 0) {
        goto resolved;
    }
    walk_init(&w, fw->id);
    rc = walk_open_store(fs, fw->store, &w, err);
    if (rc == SL_ENOENT) {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        NULL,
                        "store '%s' was deleted while object '%s' was "
                        "written",
                        fw->store,
                        fw->id);
    }
    if (rc != 0) {
        goto out;
    }
    rc = walk_dirs(fs, fw->store, fw->id, 1, &w, err);
    if (rc == SL_ENOENT && !last) {
        rc = 1; /* a folder vanished under mkdirat: try again */
    } else if (rc == SL_ENOENT) {
        rc = sl_err_set(err,
                        SL_EIO,
                        NULL,
                        "cannot commit object '%s' to store '%s': its "
                        "folders were removed %d times meanwhile",
                        fw->id,
                        fw->store,
                        COMMIT_TRIES);
    }
    if (rc != 0) {
        goto out;
    }
resolved:
    rc = check_writable(&w, fw->store, fw->id, replaced, err);
    if (rc != 0) {
        goto out;
    }
    if (renameat(fs->tmp_fd, fw->shadow, walk_parent(&w), walk_last(&w)) == 0) {
        fw->committed = 1;
        if (fw->shared) {
            /* renaming a link over another link of the same file does
             * nothing (POSIX): the shadow name would stay behind */
            (void)unlinkat(fs->tmp_fd, fw->shadow, 0);
        }
        goto out;
    }
    e = errno;
    if (e == ENOENT && !last &&
        entry_kind(fs->tmp_fd, fw->shadow, NULL) == KIND_FILE) {
        rc = 1;
    } else if (e == EISDIR || e == ENOTDIR) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        NULL,
                        "object id '%s' conflicts with another object "
                        "in store '%s'",
                        fw->id,
                        fw->store);
    } else {
        rc = sys_err(err,
                     e,
                     "cannot commit object '%s' to store '%s' (attempt %d)",
                     fw->id,
                     fw->store,
                     attempt + 1);
    }
out:
    folders_unlock(fs);
    if (rc == 0 && fw->committed) {
        rc = maybe_fsync(fs, walk_parent(&w), fw->store, fw->id, err);
    }
    walk_close(&w);
    return rc;
}

/*
 * The data is complete: fsync it now (as the commit would) and close the
 * shadow file, so a task with thousands of finished bulks waiting for its
 * commit holds no descriptor for them.  The rename needs only the name.
 */
static int
fs_writer_seal(void *wctx, struct sl_err *err)
{
    struct fs_writer *fw = wctx;
    int rc = 0;

    rc = maybe_fsync(fw->fs, fw->fd, fw->store, fw->id, err);
    if (rc != 0) {
        return rc;
    }
    close_fd(&fw->fd);
    fw->sealed = 1;
    return 0;
}

static int
fs_writer_commit(void *wctx, int *replaced, struct sl_err *err)
{
    struct fs_writer *fw = wctx;
    int tries = 0;
    int rc = 0;

    if (!fw->sealed) {
        rc = maybe_fsync(fw->fs, fw->fd, fw->store, fw->id, err);
    }
    if (rc != 0) {
        return rc;
    }
    for (tries = 0; tries < COMMIT_TRIES; tries++) {
        rc = commit_once(fw, replaced, tries, err);
        if (rc != 1) {
            break;
        }
    }
    if (rc == 0) {
        close_fd(&fw->fd);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Readers
 * --------------------------------------------------------------------- */

static void
fs_reader_free(void *rctx)
{
    struct fs_reader *fr = rctx;

    if (fr == NULL) {
        return;
    }
    close_fd(&fr->fd);
    sl_free(fr->store);
    sl_free(fr->id);
    sl_free(fr);
}

/*
 * Opens the object with O_NOFOLLOW (and O_NONBLOCK, so a planted fifo
 * cannot block us), then insists on a regular file.
 */
static int
fs_reader_open(void *ctx,
               const char *store,
               const char *id,
               void **rctx,
               uint64_t *size,
               struct sl_err *err)
{
    const struct fs *fs = ctx;
    struct fs_reader *fr = NULL;
    struct walk w;
    struct stat st;
    int rc = 0;
    int fd = -1;

    walk_init(&w, id);
    fd = fast_open(fs, store, &w, w.nseg, O_RDONLY | O_NONBLOCK);
    if (fd >= 0) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            fr = sl_calloc(1, sizeof(*fr));
            fr->fd = fd;
            fr->store = sl_strdup(store);
            fr->id = sl_strdup(id);
            *size = (uint64_t)st.st_size;
            *rctx = fr;
            return 0;
        }
        close_fd(&fd); /* a folder, a fifo: worded below */
    }
    rc = walk_resolve(fs, store, id, 0, &w, err);
    if (rc != 0) {
        return rc;
    }
    fr = sl_calloc(1, sizeof(*fr));
    fr->store = sl_strdup(store);
    fr->id = sl_strdup(id);
    fr->fd = openat(walk_parent(&w),
                    walk_last(&w),
                    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fr->fd < 0) {
        int e = errno;

        if (e == ENOENT || e == ELOOP) {
            rc = check_readable(&w, store, id, NULL, err);
        }
        if (rc == 0) {
            rc = sys_err(
                err, e, "cannot open object '%s' in store '%s'", id, store);
        }
        goto fail;
    }
    if (fstat(fr->fd, &st) != 0) {
        rc = sys_err(
            err, errno, "cannot stat object '%s' in store '%s'", id, store);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = check_readable(&w, store, id, NULL, err);
        if (rc == 0) {
            rc = sl_err_set(err,
                            SL_ENOENT,
                            NULL,
                            "no object '%s' in store '%s' (replaced "
                            "meanwhile)",
                            id,
                            store);
        }
        goto fail;
    }
    walk_close(&w);
    *size = (uint64_t)st.st_size;
    *rctx = fr;
    return 0;
fail:
    walk_close(&w);
    fs_reader_free(fr);
    return rc;
}

static int
fs_reader_fd(void *rctx)
{
    const struct fs_reader *fr = rctx;

    return fr->fd;
}

static int
fs_reader_read(void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err)
{
    struct fs_reader *fr = rctx;
    ssize_t got = 0;

    do {
        got = read(fr->fd, buf, cap);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return sys_err(err,
                       errno,
                       "cannot read object '%s' in store '%s'",
                       fr->id,
                       fr->store);
    }
    *n = (size_t)got;
    return 0;
}

static int
fs_reader_pread(void *rctx,
                uint64_t offset,
                void *buf,
                size_t cap,
                size_t *n,
                struct sl_err *err)
{
    struct fs_reader *fr = rctx;
    ssize_t got = 0;

    if (offset > (uint64_t)INT64_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          NULL,
                          "offset %llu is out of range for object '%s' in "
                          "store '%s'",
                          (unsigned long long)offset,
                          fr->id,
                          fr->store);
    }
    do {
        got = pread(fr->fd, buf, cap, (off_t)offset);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return sys_err(err,
                       errno,
                       "cannot read object '%s' in store '%s'",
                       fr->id,
                       fr->store);
    }
    *n = (size_t)got;
    return 0;
}

const struct sl__obj_backend_type sl__obj_backend_fs = {
    .abi_version = SL__OBJ_BACKEND_ABI,
    .name = "fs",
    .close = fs_close,
    .store_create = fs_store_create,
    .store_delete = fs_store_delete,
    .store_exists = fs_store_exists,
    .store_list = fs_store_list,
    .list = fs_list,
    .stat = fs_stat,
    .delete = fs_delete,
    .writer_open = fs_writer_open,
    .writer_write = fs_writer_write,
    .writer_seal = fs_writer_seal,
    .writer_commit = fs_writer_commit,
    .writer_free = fs_writer_free,
    .writer_open_file = fs_writer_open_file,
    .reader_open = fs_reader_open,
    .reader_read = fs_reader_read,
    .reader_pread = fs_reader_pread,
    .reader_free = fs_reader_free,
    .reader_fd = fs_reader_fd,
};
