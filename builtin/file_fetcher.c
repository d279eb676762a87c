/*
 * fileFetcher (SMILA's FileFetcher, docs/workers.md): for each record of input
 * `filesToFetch`, opens the file its `filePath` (else `_recordid`) names, after
 * undoing the crawler's escaping (sl_worker_path_unescape), and writes the
 * record with the content streamed into attachment `fileContent` to output
 * `files`.  Memory is one fixed read buffer per task, whatever the file
 * size.  See docs/workers.md "fileFetcher".
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin/builtin_int.h"

#define READ_BUF      (64u * 1024u)
#define MOUNTS_MAX    4096u /* mount points a task reads */
#define BIN_DEPTH_MAX 64u
#define BIN_POLL_MS   20  /* a full bin: look again after */
#define BIN_SLEEP_MAX 200 /* longest sleep between two looks */

/* State of one task. */
struct fetch {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output `files`, borrowed */
    uint64_t max_size;        /* maxFileSize */
    char *buf;                /* READ_BUF bytes */
    char root[PATH_MAX];      /* rootFolder resolved, "" when files may be
                                 anywhere (filters.linksOutsideRoot) */
    const char *id;           /* the record being fetched: _recordid */
    const char *source;       /* and _source (NULL: dataSource) */
    /* throttle bins: "mount" or "folder" (the first bin_depth folders) */
    int bin_folder;
    uint64_t bin_depth;
    const json_t *throttle; /* the job's rules, or NULL */
    int rules;              /* a rule exists (server's or job's) */
    char **mounts;          /* mount points, read at the first file */
    size_t nmounts;
    int mounts_read;
    uint64_t waited_ms; /* throttle.waitMs */
};

/* ------------------------------------------------------------------------
 * Throttle bins: "file://" and the mount point of the file, or its first
 * bin_depth folders; limited only where a rule of the server or the job
 * matches (docs/workers.md "fileFetcher").
 * --------------------------------------------------------------------- */

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void
mount_unescape(char *s)
{
    char *w = s;

    for (; *s != '\0'; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
            s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *w++ = *s;
        }
    }
    *w = '\0';
}

/* f->mounts from /proc/self/mountinfo (the fifth field of each line; a
 * line longer than the buffer is skipped). */
static void
mounts_read(struct fetch *f)
{
    FILE *in = fopen("/proc/self/mountinfo", "re");
    char line[8192];
    int whole = 1; /* the previous read ended its line */

    f->mounts_read = 1;
    if (in == NULL) {
        return;
    }
    f->mounts = sl_calloc(MOUNTS_MAX, sizeof(*f->mounts));
    while (f->nmounts < MOUNTS_MAX && fgets(line, sizeof(line), in) != NULL) {
        char *save = NULL;
        char *tok = NULL;
        int start = whole;
        int i = 0;

        whole = strchr(line, '\n') != NULL;
        if (!start || !whole) {
            continue; /* a part of a line too long */
        }
        tok = strtok_r(line, " ", &save);
        for (i = 0; tok != NULL && i < 4; i++) {
            tok = strtok_r(NULL, " ", &save);
        }
        if (tok != NULL && tok[0] == '/') {
            mount_unescape(tok);
            f->mounts[f->nmounts++] = sl_strdup(tok);
        }
    }
    (void)fclose(in);
}

/* The mount point holding absolute path @p: the longest that is a
 * folder prefix of it, or "/". */
static const char *
mount_of(struct fetch *f, const char *p)
{
    const char *best = "/";
    size_t blen = 1;
    size_t i = 0;

    if (!f->mounts_read) {
        mounts_read(f);
    }
    for (i = 0; i < f->nmounts; i++) {
        size_t n = strlen(f->mounts[i]);

        if (n > blen && strncmp(p, f->mounts[i], n) == 0 &&
            (p[n] == '/' || p[n] == '\0')) {
            best = f->mounts[i];
            blen = n;
        }
    }
    return best;
}

/* The bin of absolute path @p into @bin (PATH_MAX + 8 bytes). */
static void
bin_of(struct fetch *f, const char *p, char *bin, size_t cap)
{
    size_t end = 0;
    uint64_t depth = 0;

    if (!f->bin_folder) {
        (void)snprintf(bin, cap, "file://%s", mount_of(f, p));
        return;
    }
    /* the first bin_depth folders, never the file itself */
    for (end = 1; p[end] != '\0'; end++) {
        if (p[end] == '/' && ++depth == f->bin_depth) {
            break;
        }
    }
    if (p[end] == '\0') { /* fewer folders: the file's own */
        const char *slash = strrchr(p, '/');

        end = slash != NULL && slash != p ? (size_t)(slash - p) : 1;
    }
    (void)snprintf(bin, cap, "file://%.*s", (int)end, p);
}

/*
 * Wait until the bin of @raw grants a fetch, when a rule limits it.  Fills
 * @bin and @l; returns 1 when a fetch was granted (release it), 0 when no
 * rule matches (or the table is full), -1 when the task was canceled
 * meanwhile (skip the file: the task's result is dropped).
 */
static int
bin_acquire(struct fetch *f,
            const char *raw,
            char *bin,
            size_t cap,
            struct sl_throttle_limits *l)
{
    int64_t wait = 0;
    int rc = 0;

    if (raw[0] != '/' || !f->rules) {
        return 0;
    }
    bin_of(f, raw, bin, cap);
    memset(l, 0, sizeof(*l));
    if (sl_throttle_limits_for(bin, f->throttle, l) == 0) {
        return 0;
    }
    for (;;) {
        rc = sl_throttle_acquire(
            sl_throttle_process(), bin, l, sl_mono_ms(), 0, &wait);
        if (rc != 1) {
            return rc == 0;
        }
        if (sl_task_is_canceled(f->ctx)) {
            return -1;
        }
        wait = wait < 0               ? BIN_POLL_MS
               : wait > BIN_SLEEP_MAX ? BIN_SLEEP_MAX
                                      : wait;
        sl_sleep_ms((uint64_t)wait);
        f->waited_ms += (uint64_t)wait;
    }
}

/* Read the bin settings of the task; 0 or -1 (message set). */
static int
bin_init(struct fetch *f)
{
    const char *mode = sl_task_param_str(f->ctx, "throttleBin");

    f->throttle = sl_task_param(f->ctx, "throttle");
    f->rules = sl_throttle_any_rules(f->throttle);
    f->bin_folder = mode != NULL && strcmp(mode, "folder") == 0;
    if ((mode != NULL && !f->bin_folder && strcmp(mode, "mount") != 0) ||
        sl_task_param_u64(f->ctx, "throttleFolderDepth", 1, &f->bin_depth) !=
            0 ||
        f->bin_depth == 0 || f->bin_depth > BIN_DEPTH_MAX) {
        sl_task_set_message(f->ctx,
                            "throttleBin must be mount or folder, "
                            "throttleFolderDepth 1 to %u",
                            BIN_DEPTH_MAX);
        return -1;
    }
    return 0;
}

/*
 * Is the file open on @fd still inside f->root?  The crawler checked the
 * path when it listed it; a link or a directory on the path changed
 * since would take the fetch elsewhere (to /etc, say), so the file
 * actually opened is checked again.
 */
static int
opened_inside_root(const struct fetch *f, int fd, const char *raw)
{
    char proc[64];
    char target[PATH_MAX];
    ssize_t len = 0;

    if (f->root[0] == '\0') {
        return 1;
    }
    (void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    len = readlink(proc, target, sizeof(target) - 1);
    if (len > 0) {
        target[len] = '\0';
        if (sl__bi_path_under(f->root, target)) {
            return 1;
        }
    }
    SL_WARN("fileFetcher: %s now leads out of rootFolder %s (to %s); "
            "skipped",
            raw,
            f->root,
            len > 0 ? target : "?");
    sl_task_counter_add(f->ctx, "files.skipped.outsideRoot", 1);
    sl_task_doc(f->ctx,
                SL_JM_DOC_SKIPPED,
                f->source,
                f->id,
                "filters.linksOutsideRoot",
                len > 0 ? target : NULL);
    return 0;
}

/* f->root from rootFolder, unless filters.linksOutsideRoot allows any
 * place. */
static void
root_init(struct fetch *f)
{
    const json_t *v =
        json_object_get(sl_task_param(f->ctx, "filters"), "linksOutsideRoot");
    const char *root = sl_task_param_str(f->ctx, "rootFolder");

    f->root[0] = '\0';
    if (sl__bi_json_true(v) || root == NULL ||
        realpath(root, f->root) == NULL) {
        f->root[0] = '\0';
    }
}

/* Open @raw read-only without blocking on FIFOs or following into a
 * terminal; on failure count and log why.  Returns the fd or -1. */
static int
open_file(struct fetch *f, const char *raw, struct stat *st)
{
    int fd = open(raw, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
        SL_WARN("fileFetcher: %s: %s", raw, sl_errno_str(errno));
        sl_task_counter_add(f->ctx, "files.vanished", 1);
        sl_task_doc(f->ctx,
                    SL_JM_DOC_FAILED,
                    f->source,
                    f->id,
                    "vanished",
                    sl_errno_str(errno));
        return -1;
    }
    if (fd < 0 || fstat(fd, st) != 0) {
        /* it exists: the run must not delete its document */
        SL_WARN("fileFetcher: %s: %s", raw, sl_errno_str(errno));
        sl_task_counter_add(f->ctx, "files.unreadable", 1);
        sl_task_set_incomplete(f->ctx, "%s: %s", raw, sl_errno_str(errno));
        sl_task_doc(f->ctx,
                    SL_JM_DOC_FAILED,
                    f->source,
                    f->id,
                    "unreadable",
                    sl_errno_str(errno));
        if (fd >= 0) {
            (void)close(fd);
        }
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        sl_task_counter_add(f->ctx, "files.skipped.special", 1);
        (void)close(fd);
        return -1;
    }
    if (!opened_inside_root(f, fd, raw)) {
        (void)close(fd);
        return -1;
    }
    return fd;
}

/*
 * Stream exactly @size bytes of @fd into the current attachment.  A file
 * that shrank while being read cannot be completed (the record is already
 * half written): SL_ETRUNCATED.  Growth is cut at @size and counted.
 */
static int
copy_content(struct fetch *f, int fd, const char *raw, uint64_t size)
{
    uint64_t left = size;
    ssize_t n = 0;
    int rc = 0;

    while (left > 0) {
        size_t want = left < READ_BUF ? (size_t)left : READ_BUF;

        n = read(fd, f->buf, want);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            sl_task_set_message(
                f->ctx, "read %s: %s", raw, sl_errno_str(errno));
            return SL_EIO;
        }
        if (n == 0) {
            sl_task_counter_add(f->ctx, "files.changed", 1);
            sl_task_set_message(f->ctx,
                                "%s shrank while being read (%llu bytes "
                                "missing); the task is retried",
                                raw,
                                (unsigned long long)left);
            return SL_ETRUNCATED;
        }
        rc = sl_bulk_writer_attachment_write(f->w, f->buf, (size_t)n);
        if (rc != 0) {
            sl_task_set_message(f->ctx, "write: %s", sl_strerror(rc));
            return rc;
        }
        left -= (uint64_t)n;
    }
    do {
        n = read(fd, f->buf, 1);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        SL_WARN("fileFetcher: %s grew while being read; kept the first "
                "%llu bytes",
                raw,
                (unsigned long long)size);
        sl_task_counter_add(f->ctx, "files.changed", 1);
    }
    return 0;
}

/* Fetch the file of record @meta (borrowed; fileSize is updated).  Files
 * that cannot be read are counted and skipped; the return value is an
 * output or read error that fails the task. */
static int
fetch_record(struct fetch *f, json_t *meta)
{
    const json_t *p = json_object_get(meta, sl_task_mapped(f->ctx, "filePath"));
    const char *esc =
        json_is_string(p)
            ? json_string_value(p)
            : json_string_value(json_object_get(meta, "_recordid"));
    struct sl_throttle_limits lim;
    char bin[PATH_MAX + 8];
    struct stat st;
    char *raw = NULL;
    int held = 0;
    int fd = -1;
    int rc = 0;

    if (esc == NULL) {
        sl_task_counter_add(f->ctx, "files.unreadable", 1);
        return 0;
    }
    f->id = json_string_value(json_object_get(meta, "_recordid"));
    f->source = json_string_value(json_object_get(meta, "_source"));
    raw = sl_worker_path_unescape(esc);
    held = bin_acquire(f, raw, bin, sizeof(bin), &lim);
    if (held < 0) {
        goto out;
    }
    fd = open_file(f, raw, &st);
    if (fd < 0) {
        goto out;
    }
    (void)json_object_set_new(meta,
                              sl_task_mapped(f->ctx, "fileSize"),
                              json_integer((json_int_t)st.st_size));
    rc = sl_bulk_writer_record_begin(f->w, meta);
    if (rc != 0) {
        sl_task_set_message(f->ctx, "write: %s", sl_strerror(rc));
        goto out;
    }
    if ((uint64_t)st.st_size > f->max_size) {
        sl_task_counter_add(f->ctx, "files.skipped.size", 1);
    } else {
        rc = sl_bulk_writer_attachment_begin(
            f->w, sl_task_mapped(f->ctx, "fileContent"), (uint64_t)st.st_size);
        if (rc == 0) {
            rc = copy_content(f, fd, raw, (uint64_t)st.st_size);
        }
        if (rc != 0) {
            goto out;
        }
        sl_task_counter_add(f->ctx, "files.fetched", 1);
        sl_task_counter_add(f->ctx, "files.bytes", (double)st.st_size);
    }
    rc = sl_bulk_writer_record_end(f->w);
    if (rc != 0) {
        sl_task_set_message(f->ctx, "write: %s", sl_strerror(rc));
    }

out:
    if (held > 0) {
        sl_throttle_release(sl_throttle_process(),
                            bin,
                            &lim,
                            sl_mono_ms(),
                            fd >= 0 ? SL_THROTTLE_ANSWERED
                                    : SL_THROTTLE_NO_ANSWER,
                            -1);
    }
    if (fd >= 0) {
        (void)close(fd);
    }
    sl_free(raw);
    return rc;
}

/* One input record (a callback of sl_task_input_each): an SL_E* failure
 * of fetch_record, which has set the task message, retries the task. */
static int
fetch_input(void *arg, json_t *meta)
{
    return fetch_record(arg, meta) == 0 ? SL_WORKER_OK : SL_WORKER_RECOVERABLE;
}

static int
fetcher_perform(struct sl_task_ctx *ctx)
{
    struct fetch f;
    int res = SL_WORKER_OK;
    int rc = 0;

    memset(&f, 0, sizeof(f));
    f.ctx = ctx;
    root_init(&f);
    rc = sl_task_param_u64(
        ctx, "maxFileSize", SL_WORKER_FILE_MAX_SIZE, &f.max_size);
    if (rc != 0) {
        sl_task_set_message(ctx, "maxFileSize: not a number");
        return SL_WORKER_FATAL;
    }
    rc = sl_task_output_writer(ctx, "files", &f.w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output files: %s", sl_strerror(rc));
        return rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    }
    if (bin_init(&f) != 0) {
        return SL_WORKER_FATAL;
    }
    f.buf = sl_malloc(READ_BUF);
    res = sl_task_input_each(ctx, "filesToFetch", fetch_input, &f);
    sl_free(f.buf);
    if (f.waited_ms > 0) {
        sl_task_counter_add(ctx, "throttle.waitMs", (double)f.waited_ms);
    }
    for (size_t i = 0; i < f.nmounts; i++) {
        sl_free(f.mounts[i]);
    }
    sl_free(f.mounts);
    return res;
}

const struct sl_worker_type sl_worker_fileFetcher = {
    SL_WORKER_ABI_VERSION,
    "fileFetcher",
    "{\"name\": \"fileFetcher\","
    " \"parameters\": [{\"name\": \"maxFileSize\", \"optional\": true,"
    "   \"type\": \"integer\"},"
    "  {\"name\": \"throttleBin\", \"optional\": true,"
    "   \"values\": [\"mount\", \"folder\"], \"default\": \"mount\"},"
    "  {\"name\": \"throttleFolderDepth\", \"optional\": true,"
    "   \"type\": \"integer\", \"minimum\": 1, \"maximum\": 64},"
    "  " SL__BI_DECL_THROTTLE "," SL__BI_DECL_MAPPING "],"
    " \"input\": [{\"name\": \"filesToFetch\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"files\", \"type\": \"recordBulks\"}]}",
    fetcher_perform,
    NULL,
    NULL,
};
