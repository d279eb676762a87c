/*
 * Object store internals: the backend interface shared by objectstore.c
 * (the public API, which validates names and keeps writer state) and the
 * backends (fs.c with fs_path.c, fs_object.c and fs_list.c; s3.c with
 * s3_xml.c, s3_store.c and s3_object.c).  Not for other modules.
 *
 * A backend is a `static const struct sl__obj_backend_type` table of
 * function pointers plus a per-instance context (`void *ctx`) created by
 * the backend's own constructor (sl__obj_fs_new for the filesystem).  The
 * public layer guarantees to every hook:
 * - store names passed sl_name_check_store and object ids passed
 *   sl_name_check_object_id (a prefix is any string, possibly "");
 * - a writer hook is never called after its commit failed or succeeded,
 *   and writer_free is called exactly once;
 * - @p err may be NULL.
 * Hooks return 0 or an SL_E* code and fill @p err with a message that names
 * the store and the id.  Hooks on the instance may run on many threads at
 * once; the context must be immutable after construction (or guard its
 * own state).  A writer or reader context belongs to one thread at a time.
 */
#ifndef SL_OBJECTSTORE_INT_H_INCLUDED
#define SL_OBJECTSTORE_INT_H_INCLUDED

#include "objectstore/objectstore.h"

/** Bumped when the hook table changes incompatibly. */
#define SL__OBJ_BACKEND_ABI 3

/**
 * One backend.  Every hook is required unless marked optional; an optional
 * hook left NULL falls back to the default described next to it.
 */
struct sl__obj_backend_type {
    unsigned abi_version; /* SL__OBJ_BACKEND_ABI */
    const char *name;     /* "fs", "s3": used in messages */

    /** Free the instance context; called once by sl_obj_close. */
    void (*close)(void *ctx);

    /** Create a store; *created = 1 if new, 0 if it existed. */
    int (*store_create)(void *ctx,
                        const char *store,
                        int *created,
                        struct sl_err *err);
    /** Delete a store and its objects; SL_ENOENT when missing. */
    int (*store_delete)(void *ctx, const char *store, struct sl_err *err);
    /** Optional: 0 or SL_ENOENT.  Default: scan store_list. */
    int (*store_exists)(void *ctx, const char *store, struct sl_err *err);
    /** Call @p cb per store in byte order; returns cb's non-zero value. */
    int (*store_list)(void *ctx,
                      int (*cb)(void *cb_ctx, const char *store),
                      void *cb_ctx,
                      struct sl_err *err);

    /** Call @p cb per object with id starting with @p prefix, in byte
     * order of the ids; returns cb's non-zero value. */
    int (*list)(void *ctx,
                const char *store,
                const char *prefix,
                int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
                void *cb_ctx,
                struct sl_err *err);
    /** Size and mtime of one object (info->id is left to the caller). */
    int (*stat)(void *ctx,
                const char *store,
                const char *id,
                struct sl_obj_info *info,
                struct sl_err *err);
    /** Delete one object; SL_ENOENT when missing. */
    int (*delete)(void *ctx,
                  const char *store,
                  const char *id,
                  struct sl_err *err);

    /**
     * Start a writer: *wctx is a new writer context, freed with
     * writer_free.  Should report SL_ECONFLICT early when it can.
     */
    int (*writer_open)(void *ctx,
                       const char *store,
                       const char *id,
                       void **wctx,
                       struct sl_err *err);
    /** Append all @p len bytes (len > 0). */
    int (*writer_write)(void *wctx,
                        const void *data,
                        size_t len,
                        struct sl_err *err);
    /** Optional: no more writes; make the data durable as commit would
     * and release the descriptor (commit and free follow as usual).
     * Default: nothing (the backend keeps its resources until commit). */
    int (*writer_seal)(void *wctx, struct sl_err *err);
    /** Publish atomically; *replaced = 1 if an older version existed. */
    int (*writer_commit)(void *wctx, int *replaced, struct sl_err *err);
    /** Free the writer; discards the data unless it was committed. */
    void (*writer_free)(void *wctx);
    /**
     * Optional: a sealed writer (*wctx as for writer_open) whose data is
     * the regular file open as @p fd, shared instead of copied (the
     * filesystem: a hard link).  1 when it cannot share this file
     * (nothing created).  Default, and after 1: the public layer copies
     * the file through writer_open and writer_write.
     */
    int (*writer_open_file)(void *ctx,
                            const char *store,
                            const char *id,
                            int fd,
                            void **wctx,
                            struct sl_err *err);

    /** Open a reader: *rctx new, freed with reader_free; *size set. */
    int (*reader_open)(void *ctx,
                       const char *store,
                       const char *id,
                       void **rctx,
                       uint64_t *size,
                       struct sl_err *err);
    /** Read at the current position; *n = 0 at the end. */
    int (*reader_read)(
        void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err);
    /** Optional: read at @p offset.  Default: SL_EINVAL. */
    int (*reader_pread)(void *rctx,
                        uint64_t offset,
                        void *buf,
                        size_t cap,
                        size_t *n,
                        struct sl_err *err);
    /** Free the reader. */
    void (*reader_free)(void *rctx);
    /** Optional: the descriptor of the object a reader reads (borrowed),
     * for writer_open_file.  Default: none (the object is copied). */
    int (*reader_fd)(void *rctx);
};

/** The S3 backend (s3.c, s3_xml.c, s3_store.c, s3_object.c). */
extern const struct sl__obj_backend_type sl__obj_backend_s3;
/** @brief An S3 backend context from @p cfg (copied); SL_ECONFIG. */
int sl__obj_s3_new(const struct sl_obj_s3_config *cfg,
                   void **ctx,
                   struct sl_err *err);

/** The filesystem backend (fs.c). */
extern const struct sl__obj_backend_type sl__obj_backend_fs;

/**
 * @brief Construct a filesystem backend context rooted at @p root.
 * @param[in] root borrowed; copied.
 * @param[out] ctx new context, freed with sl__obj_backend_fs.close.
 * @return 0, SL_EIO, SL_EACCES with details in @p err.
 */
int sl__obj_fs_new(const char *root,
                   enum sl_durability durability,
                   void **ctx,
                   struct sl_err *err);

/**
 * @brief Let the filesystem backend resolve paths with openat2 (1, the
 * default where the kernel has it) or only component by component (0).
 * Process-wide; for tests that cover both ways.
 */
void sl__obj_fs_set_openat2(int on);
/** @brief 1 while paths are resolved with openat2 (after the first store
 * was opened: the kernel was asked then), else 0. */
int sl__obj_fs_openat2_on(void);

#endif /* SL_OBJECTSTORE_INT_H_INCLUDED */
