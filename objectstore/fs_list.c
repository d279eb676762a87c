/*
 * Listing of the filesystem backend (docs/objectstore.md, "Listing"): a
 * depth-first walk of a store's folders in the byte order of the ids,
 * entering only the folders that can hold ids with the prefix, and
 * opening the folders a prefix names in full directly.  Symbolic links
 * and anything that is neither a file nor a folder are skipped.
 *
 * Threading: a listing is the state of one call (struct list_ctx); many
 * may run at once on the instance.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objectstore/fs_int.h"

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
        rc = sl__obj_fs_sys_err(lc->err,
                                errno,
                                "cannot list folder '%s' of store '%s'",
                                lc->path,
                                lc->store);
        sl__obj_fs_close_fd(&dupfd);
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
                   ? sl__obj_fs_entry_kind(dirfd(d), de->d_name, NULL)
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
        rc = sl__obj_fs_sys_err(lc->err,
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
    int kind = sl__obj_fs_entry_kind(fd, name, &st);

    if (kind < 0) {
        return sl__obj_fs_sys_err(lc->err,
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
    info.mtime_ms = sl__obj_fs_mtime_ms(&st);
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
            rc = sl__obj_fs_sys_err(lc->err,
                                    errno,
                                    "cannot open folder '%s' of store '%s'",
                                    lc->path,
                                    lc->store);
            continue;
        }
        rc = list_dir(lc, sub, new_len);
        sl__obj_fs_close_fd(&sub);
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
list_from_prefix_dir(const struct sl__obj_fs *fs,
                     struct list_ctx *lc,
                     int store_fd)
{
    const char *slash = strrchr(lc->prefix, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - lc->prefix) + 1 : 0;
    char probe[SL_OBJECT_ID_MAX + 2];
    struct sl__obj_fs_walk w;
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
    sl__obj_fs_walk_init(&w, probe);
    {
        int fd = sl__obj_fs_fast_open(
            fs, lc->store, &w, w.nseg - 1, O_RDONLY | O_DIRECTORY);

        if (fd >= 0) {
            memcpy(lc->path, lc->prefix, dir_len);
            rc = list_dir(lc, fd, dir_len);
            sl__obj_fs_close_fd(&fd);
            return rc;
        }
    }
    w.fd[w.nfd++] = store_fd; /* borrowed: not closed below */
    rc = sl__obj_fs_walk_dirs(fs, lc->store, probe, 0, &w, NULL);
    if (rc == 0) {
        memcpy(lc->path, lc->prefix, dir_len);
        rc = list_dir(lc, sl__obj_fs_walk_parent(&w), dir_len);
    } else if (rc == SL_ENOENT || rc == SL_ECONFLICT) {
        rc = 0; /* a folder is missing or is an object: nothing to list */
    } else if (rc == SL_EACCES) {
        rc = 0; /* a symbolic link: never followed, so nothing below it */
    } else {
        rc = list_dir(lc, store_fd, 0); /* report it the usual way */
    }
    w.fd[0] = -1;
    sl__obj_fs_walk_close(&w);
    return rc;
}

int
sl__obj_fs_list(void *ctx,
                const char *store,
                const char *prefix,
                int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
                void *cb_ctx,
                struct sl_err *err)
{
    const struct sl__obj_fs *fs = ctx;
    struct list_ctx *lc = NULL;
    int fd = -1;
    int rc = 0;

    rc = sl__obj_fs_open_store(fs, store, &fd, err);
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
    sl__obj_fs_close_fd(&fd);
    return rc;
}
