/*
 * Embedded full-text index, the read side: search (FTS5 MATCH, bm25,
 * snippet), counts, the list of indexes, paging through record ids and
 * fetching one stored document (docs/index.md).  Queries use each
 * shard's read-only connection (its reader), never the writer's, so a
 * query reads the last committed state while an indexWriter holds the
 * shard.  Reads over several shards hold all their readers (taken in
 * shard order, so two readers cannot deadlock) and merge their ordered
 * results one row at a time: memory stays one row per shard.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index/index_int.h"

/* A text column as a JSON string, or null (NULL column or bad UTF-8). */
json_t *
sl__ix_col_json(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    json_t *v = NULL;

    if (s != NULL) {
        v = json_stringn((const char *)s, (size_t)sqlite3_column_bytes(st, i));
    }
    return v != NULL ? v : json_null();
}

/* The readers of every shard of @index, locked in shard order; *n
 * shards in @ix. */
int
sl__ix_acquire_all(struct sl_index_set *set,
                   const char *index,
                   struct sl__index *ix[SL_INDEX_MAX_SHARDS],
                   unsigned *n,
                   struct sl_err *err)
{
    unsigned s = 0;
    int rc = sl__index_nshards(set, index, 0, n, err);

    for (s = 0; rc == 0 && s < *n; s++) {
        rc = sl__index_acquire_read(set, index, s, &ix[s], err);
        if (rc != 0) {
            while (s > 0) {
                sl__index_release_read(ix[--s]);
            }
        }
    }
    return rc;
}

void
sl__ix_release_all(struct sl__index *ix[SL_INDEX_MAX_SHARDS], unsigned n)
{
    while (n > 0) {
        sl__index_release_read(ix[--n]);
    }
}

/* Sum the integer that reader statement @which returns on each of the @n
 * shards @ix into @sum. */
static int
sum_stmt(struct sl__index *ix[SL_INDEX_MAX_SHARDS],
         unsigned n,
         int which,
         const char *what,
         uint64_t *sum,
         struct sl_err *err)
{
    unsigned k = 0;
    int src = SQLITE_OK;

    *sum = 0;
    for (k = 0; k < n; k++) {
        sqlite3_stmt *st = ix[k]->rd.st[which];

        src = sqlite3_step(st);
        if (src != SQLITE_ROW) {
            return sl__index_rd_err(ix[k], src, what, err);
        }
        *sum += (uint64_t)sqlite3_column_int64(st, 0);
    }
    return 0;
}

int
sl_index_count(struct sl_index_set *set,
               const char *index,
               uint64_t *count,
               struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    unsigned n = 0;
    int rc = 0;

    *count = 0;
    rc = sl__ix_acquire_all(set, index, ix, &n, err);
    if (rc != 0) {
        return rc;
    }
    rc = sum_stmt(ix, n, SL__IX_COUNT, "count", count, err);
    sl__ix_release_all(ix, n);
    return rc;
}

int
sl_index_stats(struct sl_index_set *set,
               const char *index,
               struct sl_index_stats *stats,
               struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    unsigned n = 0;
    unsigned k = 0;
    int rc = 0;

    memset(stats, 0, sizeof(*stats));
    rc = sl__ix_acquire_all(set, index, ix, &n, err);
    if (rc != 0) {
        return rc;
    }
    rc = sum_stmt(ix, n, SL__IX_COUNT, "count", &stats->documents, err);
    if (rc == 0) {
        rc =
            sum_stmt(ix, n, SL__IX_SEGMENTS, "segments", &stats->segments, err);
    }
    for (k = 0; k < n; k++) {
        stats->merging |= atomic_load(&ix[k]->merge_due) != 0;
    }
    sl__ix_release_all(ix, n);
    return rc;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Names of the databases in the index directory ("<name>.db" with a valid
 * name), sorted; new array of new strings, caller frees each and the array.
 */
static int
scan_names(const char *dir, char ***names, size_t *n, struct sl_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    size_t cap = 0;

    *names = NULL;
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
        size_t len = strlen(de->d_name);
        char *name = NULL;

        if (len <= 3 || strcmp(de->d_name + len - 3, ".db") != 0) {
            continue;
        }
        name = sl_strndup(de->d_name, len - 3);
        if (sl_name_check_entity(name, NULL) != 0) {
            sl_free(name);
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            *names = sl_realloc(*names, cap * sizeof(**names));
        }
        (*names)[(*n)++] = name;
    }
    (void)closedir(d);
    if (*n > 1) {
        qsort(*names, *n, sizeof(**names), cmp_names);
    }
    return 0;
}

/* Is @file a file of index @name: "<name>.db", "<name>~<k>.db" (a shard,
 * k digits) or either with "-wal"?  Names may hold '.', so "<name>.x.db"
 * is another index's. */
static int
index_file(const char *file, const char *name)
{
    size_t n = strlen(name);
    const char *p = file + n;

    if (strncmp(file, name, n) != 0) {
        return 0;
    }
    if (*p == '~') {
        const char *q = ++p;

        while (*p >= '0' && *p <= '9') {
            p++;
        }
        if (p == q) {
            return 0;
        }
    }
    return strcmp(p, ".db") == 0 || strcmp(p, ".db-wal") == 0;
}

/* Bytes on disk of index @name in @dir: its shards' database files and
 * their write-ahead logs. */
static uint64_t
index_bytes(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *de = NULL;
    uint64_t sum = 0;

    while (d != NULL && (de = readdir(d)) != NULL) {
        struct stat st;

        if (index_file(de->d_name, name) &&
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode)) {
            sum += (uint64_t)st.st_size;
        }
    }
    if (d != NULL) {
        (void)closedir(d);
    }
    return sum;
}

int
sl_index_list(struct sl_index_set *set, json_t **out, struct sl_err *err)
{
    char **names = NULL;
    json_t *list = NULL;
    uint64_t count = 0;
    size_t n = 0;
    size_t i = 0;
    int rc = 0;

    *out = NULL;
    rc = scan_names(sl__index_dir(set), &names, &n, err);
    if (rc != 0) {
        return rc;
    }
    list = json_array();
    for (i = 0; i < n && rc == 0; i++) {
        rc = sl_index_count(set, names[i], &count, err);
        if (rc == SL_ENOENT) { /* dropped meanwhile */
            sl_err_clear(err);
            rc = 0;
            continue;
        }
        if (rc == 0) {
            (void)json_array_append_new(
                list,
                json_pack(
                    "{s:s, s:I, s:I}",
                    "name",
                    names[i],
                    "documentCount",
                    (json_int_t)count,
                    "sizeBytes",
                    (json_int_t)index_bytes(sl__index_dir(set), names[i])));
        }
    }
    for (i = 0; i < n; i++) {
        sl_free(names[i]);
    }
    sl_free(names);
    if (rc != 0) {
        json_decref(list);
        return rc;
    }
    *out = list;
    return 0;
}

int
sl_index_records(struct sl_index_set *set,
                 const char *index,
                 const char *after,
                 unsigned limit,
                 json_t **out,
                 struct sl_err *err)
{
    struct sl__index *ix[SL_INDEX_MAX_SHARDS];
    sqlite3_stmt *sts[SL_INDEX_MAX_SHARDS];
    const struct sl__ix_order by_id = {0, 0, 1};
    int has[SL_INDEX_MAX_SHARDS];
    json_t *records = NULL;
    json_t *next = NULL;
    unsigned got = 0;
    unsigned n = 0;
    unsigned k = 0;
    int best = 0;
    int src = SQLITE_ROW;
    int rc = 0;

    *out = NULL;
    if (limit == 0) {
        return sl_err_set(err, SL_EINVAL, "limit", "limit must be positive");
    }
    limit = limit > SL_INDEX_MAX_LIMIT ? SL_INDEX_MAX_LIMIT : limit;
    rc = sl__ix_acquire_all(set, index, ix, &n, err);
    if (rc != 0) {
        return rc;
    }
    for (k = 0; k < n; k++) {
        sts[k] = ix[k]->rd.st[SL__IX_RECORDS];
    }
    for (k = 0; k < n && (src == SQLITE_ROW || src == SQLITE_DONE); k++) {
        sqlite3_stmt *st = sts[k];

        (void)sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
        /* One more than asked tells whether a next page exists. */
        (void)sqlite3_bind_int64(st, 2, (sqlite3_int64)limit + 1);
        src = sqlite3_step(st);
        has[k] = src == SQLITE_ROW;
        best = (int)k; /* names the shard of an error */
    }
    records = json_array();
    while ((src == SQLITE_ROW || src == SQLITE_DONE) &&
           (best = sl__ix_merge_next(sts, has, n, &by_id)) >= 0) {
        sqlite3_stmt *st = ix[best]->rd.st[SL__IX_RECORDS];

        if (got == limit) {
            next = json_deep_copy(
                json_object_get(json_array_get(records, got - 1), "_recordid"));
            break;
        }
        (void)json_array_append_new(records,
                                    json_pack("{s:o, s:o}",
                                              "_recordid",
                                              sl__ix_col_json(st, 0),
                                              "textSha256",
                                              sl__ix_col_json(st, 1)));
        got++;
        src = sqlite3_step(st);
        has[best] = src == SQLITE_ROW;
    }
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        rc = sl__index_rd_err(ix[best >= 0 ? best : 0], src, "records", err);
        json_decref(records);
        json_decref(next);
    } else {
        *out = json_pack("{s:o, s:o}",
                         "records",
                         records,
                         "next",
                         next ? next : json_null());
    }
    sl__ix_release_all(ix, n);
    return rc;
}

/* "_sources": the sources that hold document @id (read side of @ix). */
static int
get_sources(struct sl__index *ix,
            const char *id,
            json_t *meta,
            struct sl_err *err)
{
    sqlite3_stmt *st = ix->rd.st[SL__IX_SRC_LIST];
    json_t *list = json_array();
    int src = SQLITE_OK;

    (void)sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        (void)json_array_append_new(list, sl__ix_col_json(st, 0));
    }
    (void)sqlite3_reset(st);
    (void)sqlite3_clear_bindings(st);
    (void)json_object_set_new(meta, "_sources", list);
    return src == SQLITE_DONE ? 0 : sl__index_rd_err(ix, src, "sources", err);
}

int
sl_index_get(struct sl_index_set *set,
             const char *index,
             const char *id,
             json_t **doc,
             struct sl_err *err)
{
    struct sl__index *ix = NULL;
    sqlite3_stmt *st = NULL;
    json_t *meta = NULL;
    unsigned n = 0;
    int src = SQLITE_OK;
    int rc = 0;

    *doc = NULL;
    rc = sl__index_nshards(set, index, 0, &n, err);
    if (rc != 0) {
        return rc;
    }
    rc =
        sl__index_acquire_read(set, index, sl__index_shard_of(id, n), &ix, err);
    if (rc != 0) {
        return rc;
    }
    st = ix->rd.st[SL__IX_GET];
    (void)sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    if (src == SQLITE_DONE) {
        rc = sl_err_set(err,
                        SL_ENOENT,
                        "_recordid",
                        "no document '%s' in index '%s'",
                        id,
                        index);
        goto out;
    }
    if (src != SQLITE_ROW) {
        rc = sl__index_rd_err(ix, src, "get", err);
        goto out;
    }
    meta = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    if (!json_is_object(meta)) {
        rc = sl_err_set(err,
                        SL_ECORRUPT,
                        NULL,
                        "index '%s': stored document '%s' is not JSON",
                        index,
                        id);
        goto out;
    }
    if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
        (void)json_object_set_new(meta, "text", sl__ix_col_json(st, 1));
    }
    rc = get_sources(ix, id, meta, err);
    if (rc != 0) {
        goto out;
    }
    *doc = meta;
    meta = NULL;

out:
    json_decref(meta);
    sl__index_release_read(ix);
    return rc;
}
