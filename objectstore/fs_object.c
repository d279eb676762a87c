/*
 * The object hooks of the filesystem backend (docs/objectstore.md): stat
 * and delete, writers (a shadow file in .tmp, or a hard link of a
 * caller's file, renamed over the id at commit) and readers.  fs.c
 * describes the layout and the folder lock that orders commits against
 * the removal of emptied folders.
 *
 * Threading: the hooks on the instance may run on many threads at once; a
 * writer or a reader belongs to one thread at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objectstore/fs_int.h"

#define COMMIT_TRIES 50 /* renames retried when a parent vanished */

struct fs_writer {
    struct sl__obj_fs *fs; /* borrowed, outlives the writer */
    int fd;                /* the shadow file, -1 once closed */
    int sealed;            /* 1 after the seal: written, fd closed */
    int committed;         /* 1 after the rename */
    int shared;            /* the shadow is a hard link of a caller's file */
    char shadow[37];       /* shadow file name in .tmp (a UUID) */
    char *store;           /* copies, for the commit and messages */
    char *id;
};

struct fs_reader {
    int fd;      /* the object file */
    char *store; /* copies, for messages */
    char *id;
};

/* ------------------------------------------------------------------------
 * Objects
 * --------------------------------------------------------------------- */

int
sl__obj_fs_stat(void *ctx,
                const char *store,
                const char *id,
                struct sl_obj_info *info,
                struct sl_err *err)
{
    const struct sl__obj_fs *fs = ctx;
    struct sl__obj_fs_walk w;
    struct stat st;
    int rc = 0;

    if (sl__obj_fs_walk_fast(fs, store, id, &w) != 0) {
        rc = sl__obj_fs_walk_resolve(fs, store, id, 0, &w, err);
        if (rc != 0) {
            return rc;
        }
    }
    rc = sl__obj_fs_check_readable(&w, store, id, &st, err);
    if (rc == 0) {
        info->size = (uint64_t)st.st_size;
        info->mtime_ms = sl__obj_fs_mtime_ms(&st);
    }
    sl__obj_fs_walk_close(&w);
    return rc;
}

/*
 * Unlinks the object, then the folders it leaves empty, innermost first,
 * up to but not including the store; a folder that is not empty (or gone)
 * ends that quietly.
 */
int
sl__obj_fs_delete(void *ctx,
                  const char *store,
                  const char *id,
                  struct sl_err *err)
{
    struct sl__obj_fs *fs = ctx;
    struct sl__obj_fs_walk w;
    size_t i = 0;
    int rc = 0;

    rc = sl__obj_fs_walk_resolve(fs, store, id, 0, &w, err);
    if (rc != 0) {
        return rc;
    }
    rc = sl__obj_fs_check_readable(&w, store, id, NULL, err);
    if (rc != 0) {
        goto out;
    }
    if (unlinkat(sl__obj_fs_walk_parent(&w), sl__obj_fs_walk_last(&w), 0) !=
        0) {
        if (errno == ENOENT) {
            rc = sl_err_set(err,
                            SL_ENOENT,
                            NULL,
                            "no object '%s' in store '%s'",
                            id,
                            store);
        } else {
            rc = sl__obj_fs_sys_err(err,
                                    errno,
                                    "cannot delete object '%s' in store '%s'",
                                    id,
                                    store);
        }
        goto out;
    }
    sl__obj_fs_folders_lock(fs, 1);
    for (i = w.nfd - 1; i > 0; i--) {
        if (unlinkat(w.fd[i - 1], w.seg[i - 1], AT_REMOVEDIR) != 0) {
            break;
        }
    }
    sl__obj_fs_folders_unlock(fs);
    rc = sl__obj_fs_maybe_fsync(fs, w.fd[i], store, id, err);
out:
    sl__obj_fs_walk_close(&w);
    return rc;
}

/* ------------------------------------------------------------------------
 * Writers
 * --------------------------------------------------------------------- */

void
sl__obj_fs_writer_free(void *wctx)
{
    struct fs_writer *fw = wctx;

    if (fw == NULL) {
        return;
    }
    if (fw->fd >= 0 || fw->sealed) {
        sl__obj_fs_close_fd(&fw->fd);
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
writer_new(struct sl__obj_fs *fs,
           const char *store,
           const char *id,
           struct fs_writer **out,
           struct sl_err *err)
{
    struct fs_writer *fw = NULL;
    struct sl__obj_fs_walk w;
    int existed = 0;
    int rc = 0;

    if (sl__obj_fs_walk_fast(fs, store, id, &w) == 0) {
        rc = sl__obj_fs_check_writable(&w, store, id, &existed, err);
    } else if (errno == ENOENT && sl__obj_fs_store_is_dir(fs, store)) {
        /* a folder is missing, and those before it are real folders
         * (openat2 followed no link): nothing can conflict yet */
        rc = 0;
    } else {
        sl__obj_fs_walk_init(&w, id);
        rc = sl__obj_fs_walk_open_store(fs, store, &w, err);
        if (rc == 0) {
            rc = sl__obj_fs_walk_dirs(fs, store, id, 0, &w, err);
        }
        if (rc == 0) {
            rc = sl__obj_fs_check_writable(&w, store, id, &existed, err);
        } else if (rc == SL_ENOENT && w.nfd > 0) {
            sl_err_clear(err);
            rc = 0;
        }
    }
    sl__obj_fs_walk_close(&w);
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

int
sl__obj_fs_writer_open(void *ctx,
                       const char *store,
                       const char *id,
                       void **wctx,
                       struct sl_err *err)
{
    struct sl__obj_fs *fs = ctx;
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
        rc = sl__obj_fs_sys_err(
            err,
            errno,
            "cannot create shadow file for object '%s' in store '%s'",
            id,
            store);
        sl__obj_fs_writer_free(fw);
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
int
sl__obj_fs_writer_open_file(void *ctx,
                            const char *store,
                            const char *id,
                            int fd,
                            void **wctx,
                            struct sl_err *err)
{
    struct sl__obj_fs *fs = ctx;
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
        rc = sl__obj_fs_maybe_fsync(fs, fd, store, id, err);
    }
    if (rc != 0) {
        sl__obj_fs_writer_free(fw);
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
        sl__obj_fs_writer_free(fw);
        return 1;
    }
    fw->sealed = 1;
    fw->shared = 1;
    *wctx = fw;
    return 0;
}

int
sl__obj_fs_writer_write(void *wctx,
                        const void *data,
                        size_t len,
                        struct sl_err *err)
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
            return sl__obj_fs_sys_err(err,
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
    struct sl__obj_fs *fs = fw->fs;
    int last = attempt + 1 == COMMIT_TRIES;
    struct sl__obj_fs_walk w;
    int e = 0;
    int rc = 0;

    sl__obj_fs_folders_lock(fs, 0);
    if (sl__obj_fs_walk_fast(fs, fw->store, fw->id, &w) == 0) {
        goto resolved;
    }
    sl__obj_fs_walk_init(&w, fw->id);
    rc = sl__obj_fs_walk_open_store(fs, fw->store, &w, err);
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
    rc = sl__obj_fs_walk_dirs(fs, fw->store, fw->id, 1, &w, err);
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
    rc = sl__obj_fs_check_writable(&w, fw->store, fw->id, replaced, err);
    if (rc != 0) {
        goto out;
    }
    if (renameat(fs->tmp_fd,
                 fw->shadow,
                 sl__obj_fs_walk_parent(&w),
                 sl__obj_fs_walk_last(&w)) == 0) {
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
        sl__obj_fs_entry_kind(fs->tmp_fd, fw->shadow, NULL) == KIND_FILE) {
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
        rc = sl__obj_fs_sys_err(
            err,
            e,
            "cannot commit object '%s' to store '%s' (attempt %d)",
            fw->id,
            fw->store,
            attempt + 1);
    }
out:
    sl__obj_fs_folders_unlock(fs);
    if (rc == 0 && fw->committed) {
        rc = sl__obj_fs_maybe_fsync(
            fs, sl__obj_fs_walk_parent(&w), fw->store, fw->id, err);
    }
    sl__obj_fs_walk_close(&w);
    return rc;
}

/*
 * The data is complete: fsync it now (as the commit would) and close the
 * shadow file, so a task with thousands of finished bulks waiting for its
 * commit holds no descriptor for them.  The rename needs only the name.
 */
int
sl__obj_fs_writer_seal(void *wctx, struct sl_err *err)
{
    struct fs_writer *fw = wctx;
    int rc = 0;

    rc = sl__obj_fs_maybe_fsync(fw->fs, fw->fd, fw->store, fw->id, err);
    if (rc != 0) {
        return rc;
    }
    sl__obj_fs_close_fd(&fw->fd);
    fw->sealed = 1;
    return 0;
}

int
sl__obj_fs_writer_commit(void *wctx, int *replaced, struct sl_err *err)
{
    struct fs_writer *fw = wctx;
    int tries = 0;
    int rc = 0;

    if (!fw->sealed) {
        rc = sl__obj_fs_maybe_fsync(fw->fs, fw->fd, fw->store, fw->id, err);
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
        sl__obj_fs_close_fd(&fw->fd);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Readers
 * --------------------------------------------------------------------- */

void
sl__obj_fs_reader_free(void *rctx)
{
    struct fs_reader *fr = rctx;

    if (fr == NULL) {
        return;
    }
    sl__obj_fs_close_fd(&fr->fd);
    sl_free(fr->store);
    sl_free(fr->id);
    sl_free(fr);
}

/*
 * Opens the object with O_NOFOLLOW (and O_NONBLOCK, so a planted fifo
 * cannot block us), then insists on a regular file.
 */
int
sl__obj_fs_reader_open(void *ctx,
                       const char *store,
                       const char *id,
                       void **rctx,
                       uint64_t *size,
                       struct sl_err *err)
{
    const struct sl__obj_fs *fs = ctx;
    struct fs_reader *fr = NULL;
    struct sl__obj_fs_walk w;
    struct stat st;
    int rc = 0;
    int fd = -1;

    sl__obj_fs_walk_init(&w, id);
    fd = sl__obj_fs_fast_open(fs, store, &w, w.nseg, O_RDONLY | O_NONBLOCK);
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
        sl__obj_fs_close_fd(&fd); /* a folder, a fifo: worded below */
    }
    rc = sl__obj_fs_walk_resolve(fs, store, id, 0, &w, err);
    if (rc != 0) {
        return rc;
    }
    fr = sl_calloc(1, sizeof(*fr));
    fr->store = sl_strdup(store);
    fr->id = sl_strdup(id);
    fr->fd = openat(sl__obj_fs_walk_parent(&w),
                    sl__obj_fs_walk_last(&w),
                    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fr->fd < 0) {
        int e = errno;

        if (e == ENOENT || e == ELOOP) {
            rc = sl__obj_fs_check_readable(&w, store, id, NULL, err);
        }
        if (rc == 0) {
            rc = sl__obj_fs_sys_err(
                err, e, "cannot open object '%s' in store '%s'", id, store);
        }
        goto fail;
    }
    if (fstat(fr->fd, &st) != 0) {
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot stat object '%s' in store '%s'", id, store);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = sl__obj_fs_check_readable(&w, store, id, NULL, err);
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
    sl__obj_fs_walk_close(&w);
    *size = (uint64_t)st.st_size;
    *rctx = fr;
    return 0;
fail:
    sl__obj_fs_walk_close(&w);
    sl__obj_fs_reader_free(fr);
    return rc;
}

int
sl__obj_fs_reader_fd(void *rctx)
{
    const struct fs_reader *fr = rctx;

    return fr->fd;
}

int
sl__obj_fs_reader_read(
    void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err)
{
    struct fs_reader *fr = rctx;
    ssize_t got = 0;

    do {
        got = read(fr->fd, buf, cap);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        return sl__obj_fs_sys_err(err,
                                  errno,
                                  "cannot read object '%s' in store '%s'",
                                  fr->id,
                                  fr->store);
    }
    *n = (size_t)got;
    return 0;
}

int
sl__obj_fs_reader_pread(void *rctx,
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
        return sl__obj_fs_sys_err(err,
                                  errno,
                                  "cannot read object '%s' in store '%s'",
                                  fr->id,
                                  fr->store);
    }
    *n = (size_t)got;
    return 0;
}
