/*
 * Object store: stores (flat namespaces) of objects addressed by ids that
 * may contain '/'.  One public header; backends plug in behind it (the
 * local filesystem backend is the default, see docs/objectstore.md; the
 * REST API is in docs/rest-api.md).
 *
 * Guarantees:
 * - A written object becomes visible only on sl_obj_writer_commit; a
 *   reader never sees half an object, and a writer that dies before commit
 *   leaves nothing visible (shadow files are swept at the next open).
 * - With SL_DURABILITY_FSYNC, commit fsyncs the data and the directory, so
 *   a committed object survives power loss; with SL_DURABILITY_PROCESS it
 *   survives a process crash (the page cache keeps it).
 * - Names are checked (sl_name_check_store / sl_name_check_object_id) and
 *   nothing can leave the store directory: path components are opened one
 *   by one without following symbolic links.
 *
 * Threading: a struct sl_obj may be used from any number of threads at
 * once.  A reader or writer belongs to one thread at a time.
 */
#ifndef SL_OBJECTSTORE_H_INCLUDED
#define SL_OBJECTSTORE_H_INCLUDED

#include <stdint.h>

#include "core/sl.h"

struct sl_obj;
struct sl_obj_writer;
struct sl_obj_reader;

/** Metadata of one object, as given to list callbacks. */
struct sl_obj_info {
    const char *id;   /* borrowed, valid during the callback */
    uint64_t size;    /* bytes */
    int64_t mtime_ms; /* last commit, ms since the epoch */
};

/**
 * @brief Open the filesystem backend rooted at @p root (created if missing,
 * parents included).  Leftover shadow files of crashed writers are removed.
 * @param[in] root borrowed; copied.
 * @return 0, or SL_EIO / SL_EACCES with details in @p err.  On success *out
 * is a new object, caller frees with sl_obj_close.
 */
int sl_obj_open_fs(const char *root,
                   enum sl_durability durability,
                   struct sl_obj **out,
                   struct sl_err *err);
/** Configuration of the S3 backend (docs/objectstore.md "S3"); strings
 * borrowed, NULL or 0 for the defaults given. */
struct sl_obj_s3_config {
    const char *endpoint; /* "https://s3.eu-west-1.amazonaws.com" (required) */
    const char *region;   /* for the signature; "us-east-1" */
    const char
        *bucket; /* stores are prefixes of it; NULL: stores are buckets */
    const char *prefix; /* before every key (with a bucket) or bucket name */
    int path_style;     /* endpoint/bucket/key, else bucket.endpoint/key */
    const char *access_key; /* NULL: AWS_ACCESS_KEY_ID..., then the */
    const char *secret_key; /* shared credentials file */
    const char *session_token;
    const char *ca_file;  /* CA bundle for TLS; NULL: the system's */
    uint64_t part_size;   /* bytes buffered per writer, 5 MiB-5 GiB; 8 MiB */
    unsigned max_retries; /* of a request that failed for the network, 429
                           * or 5xx; 5 */
    unsigned backoff_ms;  /* the first pause between them, doubled; 100 */
};

/**
 * @brief Open the S3 backend: stores are buckets or prefixes of one
 * bucket on an S3-compatible server (AWS S3, MinIO, Ceph), requests signed
 * with AWS Signature V4.  Nothing is sent yet: a missing bucket or wrong
 * credentials show at the first request.
 * @return 0, or SL_ECONFIG (no endpoint, no credentials, a part size out
 * of range) with details in @p err.  *out as for sl_obj_open_fs.
 */
int sl_obj_open_s3(const struct sl_obj_s3_config *cfg,
                   struct sl_obj **out,
                   struct sl_err *err);
/** @brief The name of the backend of @p o: "fs" or "s3". */
const char *sl_obj_backend_name(const struct sl_obj *o);
/** @brief Close the store service; NULL-safe. Readers and writers must be
 * freed before. */
void sl_obj_close(struct sl_obj *o);

/**
 * @brief Create store @p store.
 * @param[out] created 1 if it was created, 0 if it existed (may be NULL).
 * @return 0 or SL_EBADNAME / SL_EIO.
 */
int sl_obj_store_create(struct sl_obj *o,
                        const char *store,
                        int *created,
                        struct sl_err *err);
/** @brief Delete store @p store and all its objects. 0, SL_ENOENT, SL_EIO. */
int
sl_obj_store_delete(struct sl_obj *o, const char *store, struct sl_err *err);
/** @brief 0 if @p store exists, SL_ENOENT if not, SL_EBADNAME. */
int
sl_obj_store_exists(struct sl_obj *o, const char *store, struct sl_err *err);
/**
 * @brief Call @p cb for each store name in byte order.  @p cb returns 0 to
 * go on, anything else stops the walk and is returned.
 */
int sl_obj_store_list(struct sl_obj *o,
                      int (*cb)(void *ctx, const char *store),
                      void *ctx,
                      struct sl_err *err);
/**
 * @brief Call @p cb for each object of @p store whose id starts with
 * @p prefix (NULL or "" for all), in byte order of the ids.  @p cb returns 0
 * to go on, anything else stops the walk and is returned.  Memory is bounded
 * by the size of one directory listing, never by the store size.
 * @return 0, SL_ENOENT (no such store), SL_EBADNAME, SL_EIO, or @p cb's
 * value.
 */
int sl_obj_list(struct sl_obj *o,
                const char *store,
                const char *prefix,
                int (*cb)(void *ctx, const struct sl_obj_info *info),
                void *ctx,
                struct sl_err *err);
/** @brief Size and mtime of one object; @p info->id is set to NULL. */
int sl_obj_stat(struct sl_obj *o,
                const char *store,
                const char *id,
                struct sl_obj_info *info,
                struct sl_err *err);
/** @brief Delete one object. 0, SL_ENOENT, SL_EBADNAME, SL_EIO. */
int sl_obj_delete(struct sl_obj *o,
                  const char *store,
                  const char *id,
                  struct sl_err *err);

/**
 * @brief Start writing object @p id of @p store (replaced on commit if it
 * exists).  Nothing is visible before sl_obj_writer_commit.
 * @return 0, SL_ENOENT (no such store), SL_EBADNAME, SL_ECONFLICT (a prefix
 * of the id is an object, or the id is a folder of other objects), SL_EIO.
 * On success *out is a new object, caller frees with sl_obj_writer_free.
 */
int sl_obj_writer_open(struct sl_obj *o,
                       const char *store,
                       const char *id,
                       struct sl_obj_writer **out,
                       struct sl_err *err);
/**
 * @brief Start a writer of object @p id of @p store whose data is the
 * regular file open as @p fd (borrowed; read from its start, its offset is
 * not used): shared where the backend can (the filesystem backend makes a
 * hard link, so nothing is copied), copied otherwise.  The writer comes
 * sealed: commit publishes the object, free discards it.  Shared data
 * means the file must never change again; an object shared this way keeps
 * the file's modification time.
 * @return as sl_obj_writer_open, SL_EINVAL (not a regular file), or an
 * error of the copy.  *out as for sl_obj_writer_open.
 */
int sl_obj_writer_open_file(struct sl_obj *o,
                            const char *store,
                            const char *id,
                            int fd,
                            struct sl_obj_writer **out,
                            struct sl_err *err);
/**
 * @brief As sl_obj_writer_open_file, with the data of the object that
 * @p src reads (borrowed; all of it, whatever its position, which stays):
 * for a worker that passes an input on unchanged.  Objects never change
 * once committed, so sharing is safe.
 */
int sl_obj_writer_open_copy(struct sl_obj *o,
                            const char *store,
                            const char *id,
                            struct sl_obj_reader *src,
                            struct sl_obj_writer **out,
                            struct sl_err *err);
/** @brief Append @p len bytes. 0, SL_ENOSPC, SL_EIO; the writer then
 * fails for good (SL_EBADSTATE). */
int sl_obj_writer_write(struct sl_obj_writer *w,
                        const void *data,
                        size_t len,
                        struct sl_err *err);
/** @brief Bytes written so far. */
uint64_t sl_obj_writer_size(const struct sl_obj_writer *w);
/**
 * @brief No more data: make what was written as durable as the commit
 * would, and release what only writing needs (the file descriptor), so a
 * task can keep many finished objects waiting for its commit decision.
 * The object is still invisible; commit publishes it, free discards it.
 * @return 0, SL_EIO (fsync; the writer then fails for good), SL_EBADSTATE
 * (failed, sealed or committed writer).
 */
int sl_obj_writer_seal(struct sl_obj_writer *w, struct sl_err *err);
/**
 * @brief Publish the object atomically (an open or sealed writer).
 * @param[out] replaced 1 if an older version was replaced (may be NULL).
 * @return 0, SL_ENOENT (store deleted meanwhile), SL_ECONFLICT, SL_EIO,
 * SL_EBADSTATE (failed or already committed writer).
 */
int sl_obj_writer_commit(struct sl_obj_writer *w,
                         int *replaced,
                         struct sl_err *err);
/** @brief Free the writer, discarding uncommitted data; NULL-safe. */
void sl_obj_writer_free(struct sl_obj_writer *w);
/** @brief A sink writing into @p w (for the bulk codec); borrowed. */
void sl_obj_writer_sink(struct sl_obj_writer *w, struct sl_sink *sink);

/**
 * @brief Open object @p id for reading.
 * @return 0, SL_ENOENT, SL_EBADNAME, SL_EIO.  *out is a new object, caller
 * frees with sl_obj_reader_free.
 */
int sl_obj_reader_open(struct sl_obj *o,
                       const char *store,
                       const char *id,
                       struct sl_obj_reader **out,
                       struct sl_err *err);
/** @brief Object size at open time. */
uint64_t sl_obj_reader_size(const struct sl_obj_reader *r);
/** @brief Read up to @p cap bytes at the current position (*n = 0: end). */
int sl_obj_reader_read(struct sl_obj_reader *r,
                       void *buf,
                       size_t cap,
                       size_t *n,
                       struct sl_err *err);
/** @brief Read up to @p cap bytes at @p offset (position unchanged). */
int sl_obj_reader_pread(struct sl_obj_reader *r,
                        uint64_t offset,
                        void *buf,
                        size_t cap,
                        size_t *n,
                        struct sl_err *err);
/** @brief Free the reader; NULL-safe. */
void sl_obj_reader_free(struct sl_obj_reader *r);
/** @brief A source reading from @p r (for the bulk codec); borrowed. */
void sl_obj_reader_source(struct sl_obj_reader *r, struct sl_source *src);

#endif /* SL_OBJECTSTORE_H_INCLUDED */
