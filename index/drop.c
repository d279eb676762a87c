/*
 * Dropping an index (sl_index_drop, docs/index.md "Deleting an index"):
 * its open shards are taken off the set once no call uses them, their
 * connections closed, and its database files removed (every shard, with
 * SQLite's -wal, -shm and -journal files).
 *
 * While a drop runs, calls that would read the index answer SL_ENOENT and
 * calls that would write it wait (index.c, find_shard), so no connection
 * is opened on a file about to go; a write after the drop creates the
 * index again, empty.
 *
 * Files go in an order that survives a crash half-way: the other shards
 * first, shard 0 last, and each shard's -wal, -shm and -journal before its
 * database (a database without its WAL only lacks its last transactions;
 * a stale WAL next to a new database would be replayed into it).  Shard 0
 * tells whether the index exists, so until its database is gone the index
 * is still there (with fewer documents) and dropping it again finishes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/index_int.h"

/* A file of the index: its name in the directory, shard and kind. */
struct file {
    char *name;
    unsigned long shard;
    int is_db; /* the database itself, not a side file */
};

/* ------------------------------------------------------------------------
 * Taking the index off the set
 * --------------------------------------------------------------------- */

/* Does the database of shard 0 of @name exist?  set->mu held. */
static int
exists(const struct sl_index_set *set, const char *name)
{
    char *path = sl_asprintf("%s/%s.db", set->dir, name);
    struct stat sb;
    int yes = sl__index_find_open(set, name, 0) != NULL || stat(path, &sb) == 0;

    sl_free(path);
    return yes;
}

/* Any user left among the detached shards @ix?  set->mu held. */
static int
in_use(const struct sl__index *ix)
{
    for (; ix != NULL; ix = ix->next) {
        if (ix->users > 0) {
            return 1;
        }
    }
    return 0;
}

/*
 * Begin dropping index @name: mark it (from now on it is not found, or
 * writers wait), take its shards off the list, wait until no call uses
 * them and close them.  0 with the mark set (detach_end removes it), or
 * SL_ENOENT with nothing changed.  A second drop of the same name waits
 * for the first, then finds no index.
 */
static int
detach(struct sl_index_set *set, const char *name, struct sl_err *err)
{
    struct sl__index_dropping *d = sl_calloc(1, sizeof(*d));
    struct sl__index *gone = NULL;
    struct sl__index **pp = NULL;
    struct sl__index *ix = NULL;

    (void)snprintf(d->name, sizeof(d->name), "%s", name);
    (void)pthread_mutex_lock(&set->mu);
    while (sl__index_dropping(set, name)) {
        (void)pthread_cond_wait(&set->cv, &set->mu);
    }
    if (!exists(set, name)) {
        (void)pthread_mutex_unlock(&set->mu);
        sl_free(d);
        return sl_err_set(err, SL_ENOENT, "index", "no index '%s'", name);
    }
    d->next = set->dropping;
    set->dropping = d;
    for (pp = &set->head; (ix = *pp) != NULL;) {
        if (strcmp(ix->name, name) == 0) {
            *pp = ix->next;
            ix->next = gone;
            gone = ix;
        } else {
            pp = &ix->next;
        }
    }
    while (in_use(gone)) {
        (void)pthread_cond_wait(&set->cv, &set->mu);
    }
    (void)pthread_mutex_unlock(&set->mu);
    while (gone != NULL) { /* unreachable now: nobody else holds them */
        ix = gone;
        gone = ix->next;
        sl__index_free(ix);
    }
    return 0;
}

/* End the drop of @name: wake the writers waiting for it. */
static void
detach_end(struct sl_index_set *set, const char *name)
{
    struct sl__index_dropping **pp = NULL;
    struct sl__index_dropping *d = NULL;

    (void)pthread_mutex_lock(&set->mu);
    for (pp = &set->dropping; (d = *pp) != NULL; pp = &d->next) {
        if (strcmp(d->name, name) == 0) {
            *pp = d->next;
            sl_free(d);
            break;
        }
    }
    (void)pthread_cond_broadcast(&set->cv);
    (void)pthread_mutex_unlock(&set->mu);
}

/* ------------------------------------------------------------------------
 * Removing the files
 * --------------------------------------------------------------------- */

/*
 * Is @fname a file of index @name: "<name>[~<k>].db" with "", "-wal",
 * "-shm" or "-journal" after it?  Index names have no '~', and a name
 * with ".db" in it ("a.db") has files of its own ("a.db.db") that the
 * suffix rule keeps apart.
 */
static int
match(const char *fname, const char *name, struct file *f)
{
    static const char *const side[] = {"-wal", "-shm", "-journal"};
    size_t nlen = strlen(name);
    const char *p = fname + nlen;
    char *end = NULL;
    size_t i = 0;

    if (strncmp(fname, name, nlen) != 0) {
        return 0;
    }
    f->shard = 0;
    if (*p == '~') {
        if (p[1] < '0' || p[1] > '9') {
            return 0;
        }
        f->shard = strtoul(p + 1, &end, 10);
        p = end;
    }
    if (strncmp(p, ".db", 3) != 0) {
        return 0;
    }
    p += 3;
    f->is_db = *p == '\0';
    for (i = 0; !f->is_db && i < sizeof(side) / sizeof(side[0]); i++) {
        if (strcmp(p, side[i]) == 0) {
            return 1;
        }
    }
    return f->is_db;
}

/* Removal order (see the file comment): shard 0 last, a database after
 * its side files. */
static int
cmp_file(const void *a, const void *b)
{
    const struct file *x = a;
    const struct file *y = b;

    if ((x->shard == 0) != (y->shard == 0)) {
        return x->shard == 0 ? 1 : -1;
    }
    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    return x->is_db - y->is_db;
}

/* The files of index @name in @dir, in removal order; caller frees each
 * name and the array. */
static int
list_files(const char *dir,
           const char *name,
           struct file **out,
           size_t *n,
           struct sl_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    struct file f;
    size_t cap = 0;

    *out = NULL;
    *n = 0;
    if (d == NULL) {
        return sl_err_set(err,
                          sl_err_from_errno(errno),
                          NULL,
                          "cannot read index directory '%s': %s",
                          dir,
                          sl_errno_str(errno));
    }
    while ((de = readdir(d)) != NULL) {
        if (!match(de->d_name, name, &f)) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *out = sl_realloc(*out, cap * sizeof(**out));
        }
        f.name = sl_strdup(de->d_name);
        (*out)[(*n)++] = f;
    }
    (void)closedir(d);
    if (*n > 1) {
        qsort(*out, *n, sizeof(**out), cmp_file);
    }
    return 0;
}

/* Remove the files of index @name from @dir (absent ones are fine) and
 * sync the directory; stops at the first that cannot be removed. */
static int
remove_files(const char *dir, const char *name, struct sl_err *err)
{
    struct file *files = NULL;
    size_t n = 0;
    size_t i = 0;
    int fd = -1;
    int rc = list_files(dir, name, &files, &n, err);

    for (i = 0; i < n && rc == 0; i++) {
        char *path = sl_asprintf("%s/%s", dir, files[i].name);

        if (unlink(path) != 0 && errno != ENOENT) {
            rc = sl_err_set(err,
                            sl_err_from_errno(errno),
                            "index",
                            "index '%s': cannot remove '%s': %s",
                            name,
                            files[i].name,
                            sl_errno_str(errno));
        }
        sl_free(path);
    }
    for (i = 0; i < n; i++) {
        sl_free(files[i].name);
    }
    sl_free(files);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* the removal survives a power loss */
        (void)close(fd);
    }
    return rc;
}

int
sl_index_drop(struct sl_index_set *set, const char *index, struct sl_err *err)
{
    int rc = sl_name_check_entity(index, err);

    if (rc == 0) {
        rc = detach(set, index, err);
    }
    if (rc != 0) {
        return rc;
    }
    rc = remove_files(set->dir, index, err);
    detach_end(set, index);
    return rc;
}
