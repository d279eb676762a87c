/*
 * Filesystem backend of the object store (docs/objectstore.md): the
 * instance, its stores, the recursive removal that sweeps shadow files
 * and deleted stores, and the hook table.  The object hooks are in
 * fs_object.c, the listing in fs_list.c, the resolution of paths in
 * fs_path.c; fs_int.h is what they share.
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
 * Threading: struct sl__obj_fs is immutable after sl__obj_fs_new (two
 * fds, the root path for messages, the durability), so any number of
 * threads may use it at once.  Its one lock only orders commits (shared)
 * against the removal of emptied folders by deletes (exclusive), which
 * would otherwise remove a folder between a commit's mkdir and its
 * rename.  Writers and readers belong to one thread at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objectstore/fs_int.h"

#define TMP_DIR      ".tmp"          /* shadow files, under the root */
#define RM_MAX_DEPTH (MAX_DEPTH + 8) /* recursion bound of rm_contents */

/* ------------------------------------------------------------------------
 * The folder lock
 * --------------------------------------------------------------------- */

/* Lock failures mean corrupted state (STYLE 17): panic. */
void
sl__obj_fs_folders_lock(struct sl__obj_fs *fs, int exclusive)
{
    int e = exclusive ? pthread_rwlock_wrlock(&fs->folders)
                      : pthread_rwlock_rdlock(&fs->folders);

    if (e != 0) {
        sl_panic("object store folder lock failed: %d", e);
    }
}

void
sl__obj_fs_folders_unlock(struct sl__obj_fs *fs)
{
    int e = pthread_rwlock_unlock(&fs->folders);

    if (e != 0) {
        sl_panic("object store folder unlock failed: %d", e);
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
                sl__obj_fs_close_fd(&sub);
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
    struct sl__obj_fs *fs = ctx;

    if (fs == NULL) {
        return;
    }
    sl__obj_fs_close_fd(&fs->root_fd);
    sl__obj_fs_close_fd(&fs->tmp_fd);
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
    struct sl__obj_fs *fs = NULL;
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
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot open object store root '%s'", root);
        goto fail;
    }
    if (mkdirat(fs->root_fd, TMP_DIR, 0700) != 0 && errno != EEXIST) {
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot create '%s/" TMP_DIR "'", root);
        goto fail;
    }
    fs->tmp_fd = openat(fs->root_fd, TMP_DIR, DIR_OPEN_FLAGS);
    if (fs->tmp_fd < 0) {
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot open '%s/" TMP_DIR "'", root);
        goto fail;
    }
    sl__obj_fs_probe_openat2();
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
                 : sl__obj_fs_sys_err(
                       err, errno, "cannot lock '%s/" TMP_DIR "'", root);
        goto fail;
    }
    /* Shadow files of writers that died before commit, and stores whose
     * deletion was interrupted: nothing in .tmp is visible, all of it goes. */
    sweep_fd = dup(fs->tmp_fd);
    if (sweep_fd < 0) {
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot sweep '%s/" TMP_DIR "'", root);
        goto fail;
    }
    rc = rm_contents(sweep_fd, 0);
    if (rc != 0) {
        rc =
            sl__obj_fs_sys_err(err, -rc, "cannot sweep '%s/" TMP_DIR "'", root);
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
    const struct sl__obj_fs *fs = ctx;
    int kind = 0;

    *created = 0;
    if (mkdirat(fs->root_fd, store, 0755) == 0) {
        *created = 1;
        if (fs->durability == SL_DURABILITY_FSYNC && fsync(fs->root_fd) != 0) {
            return sl__obj_fs_sys_err(
                err, errno, "cannot fsync for store '%s'", store);
        }
        return 0;
    }
    if (errno != EEXIST) {
        return sl__obj_fs_sys_err(
            err, errno, "cannot create store '%s'", store);
    }
    kind = sl__obj_fs_entry_kind(fs->root_fd, store, NULL);
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
    struct sl__obj_fs *fs = ctx;
    char trash[48];
    char uuid[37];
    int fd = -1;
    int rc = 0;

    rc = sl__obj_fs_open_store(fs, store, &fd, err);
    if (rc != 0) {
        return rc;
    }
    sl__obj_fs_close_fd(&fd);
    sl_uuid(uuid);
    (void)snprintf(trash, sizeof(trash), "del-%s", uuid);
    sl__obj_fs_folders_lock(fs, 1);
    rc = renameat(fs->root_fd, store, fs->tmp_fd, trash) != 0 ? errno : 0;
    sl__obj_fs_folders_unlock(fs);
    if (rc != 0) {
        errno = rc;
        if (errno == ENOENT) {
            return sl_err_set(err, SL_ENOENT, NULL, "no store '%s'", store);
        }
        return sl__obj_fs_sys_err(
            err, errno, "cannot delete store '%s'", store);
    }
    if (fs->durability == SL_DURABILITY_FSYNC && fsync(fs->root_fd) != 0) {
        return sl__obj_fs_sys_err(
            err, errno, "cannot fsync for store '%s'", store);
    }
    fd = openat(fs->tmp_fd, trash, DIR_OPEN_FLAGS);
    rc = fd < 0 ? -errno : rm_contents(fd, 0);
    if (rc == 0 && unlinkat(fs->tmp_fd, trash, AT_REMOVEDIR) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        /* The store is gone; only disk space waits for the next sweep. */
        SL_WARN("store '%s' deleted, but removing its files from '%s/" TMP_DIR
                "/%s' failed: %s",
                store,
                fs->root,
                trash,
                sl_errno_str(-rc));
    }
    return 0;
}

static int
fs_store_exists(void *ctx, const char *store, struct sl_err *err)
{
    const struct sl__obj_fs *fs = ctx;
    int fd = -1;
    int rc = 0;

    rc = sl__obj_fs_open_store(fs, store, &fd, err);
    sl__obj_fs_close_fd(&fd);
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
    const struct sl__obj_fs *fs = ctx;
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
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot list stores in '%s'", fs->root);
        sl__obj_fs_close_fd(&fd);
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
             sl__obj_fs_entry_kind(dirfd(d), de->d_name, NULL) != KIND_DIR)) {
            continue;
        }
        if (n == cap) {
            cap = cap == 0 ? 16 : cap * 2;
            names = sl_realloc(names, cap * sizeof(*names));
        }
        names[n++] = sl_strdup(de->d_name);
    }
    if (errno != 0) {
        rc = sl__obj_fs_sys_err(
            err, errno, "cannot list stores in '%s'", fs->root);
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

const struct sl__obj_backend_type sl__obj_backend_fs = {
    .abi_version = SL__OBJ_BACKEND_ABI,
    .name = "fs",
    .close = fs_close,
    .store_create = fs_store_create,
    .store_delete = fs_store_delete,
    .store_exists = fs_store_exists,
    .store_list = fs_store_list,
    .list = sl__obj_fs_list,
    .stat = sl__obj_fs_stat,
    .delete = sl__obj_fs_delete,
    .writer_open = sl__obj_fs_writer_open,
    .writer_write = sl__obj_fs_writer_write,
    .writer_seal = sl__obj_fs_writer_seal,
    .writer_commit = sl__obj_fs_writer_commit,
    .writer_free = sl__obj_fs_writer_free,
    .writer_open_file = sl__obj_fs_writer_open_file,
    .reader_open = sl__obj_fs_reader_open,
    .reader_read = sl__obj_fs_reader_read,
    .reader_pread = sl__obj_fs_reader_pread,
    .reader_free = sl__obj_fs_reader_free,
    .reader_fd = sl__obj_fs_reader_fd,
};
