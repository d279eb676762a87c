/*
 * `sluice bulk`: inspect and build record bulks (docs/bulk-format.md).
 *
 * cat and count stream through a bulk with the reader's streaming API, so
 * attachments are never loaded and memory stays small whatever the bulk
 * size.  from-jsonl builds a bulk from JSON lines into OUT.tmp.<pid> and
 * renames it over OUT only when the whole bulk is written, so OUT is
 * either complete or untouched.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cli/cli.h"
#include "core/sl.h"

#define LINE_MAX_BYTES ((size_t)64 << 20) /* longest accepted JSON line */
#define IO_CHUNK       ((size_t)64 << 10)

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static const char usage_text[] =
    "Usage: sluice bulk COMMAND [ARGS]\n"
    "\n"
    "Inspect and build record bulks (format: docs/bulk-format.md).\n"
    "\n"
    "Commands:\n"
    "  cat FILE...         Print each record as one JSON line: the metadata\n"
    "                      as stored plus, when the record has attachments,\n"
    "                      \"_attachments\": {NAME: {\"size\": BYTES}, ...}.\n"
    "                      Attachment data is checked but never printed.\n"
    "                      Several files are printed one after the other;\n"
    "                      the first that fails stops the command.\n"
    "  count FILE          Print the number of records (the whole bulk is\n"
    "                      read and verified).\n"
    "  from-jsonl IN OUT   Build the bulk OUT from JSON lines read from IN.\n"
    "                      Each non-blank line is a JSON object with a\n"
    "                      non-empty string \"_recordid\".  An optional\n"
    "                      \"_attachments\" object maps each attachment name\n"
    "                      to {\"base64\": \"...\"} (inline data) or\n"
    "                      {\"file\": \"PATH\"} (streamed from PATH); it is\n"
    "                      removed from the stored metadata.  Lines may be\n"
    "                      at most 64 MiB.  OUT is written atomically\n"
    "                      (OUT.tmp.PID, then rename); on error no OUT is\n"
    "                      left behind.\n"
    "\n"
    "FILE and IN may be \"-\" for standard input.\n"
    "\n"
    "Options:\n"
    "  -h, --help          Print this help and exit.\n"
    "  --                  End of options; later arguments are operands.\n"
    "\n"
    "Exit status: 0 success, 1 failure (message on stderr), 2 usage error.\n";

/* Print "sluice bulk: WHERE: MESSAGE" to stderr; returns EXIT_FAIL. */
static int report(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
report(const char *where, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    (void)fprintf(stderr, "sluice bulk: %s: %s\n", where, msg);
    return EXIT_FAIL;
}

/* Print a usage problem and the hint; returns EXIT_USAGE. */
static int
usage_error(const char *what)
{
    (void)fprintf(stderr,
                  "sluice bulk: %s\n"
                  "Try 'sluice bulk --help' for more information.\n",
                  what);
    return EXIT_USAGE;
}

/* Open @path for reading; "-" is standard input.  -1 after a report. */
static int
open_input(const char *path)
{
    int fd = -1;

    if (strcmp(path, "-") == 0) {
        return STDIN_FILENO;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        (void)report(path, "%s", sl_errno_str(errno));
    }
    return fd;
}

static void
close_input(int fd)
{
    if (fd > STDIN_FILENO) {
        (void)close(fd);
    }
}

/* ------------------------------------------------------------------------
 * cat and count.
 * --------------------------------------------------------------------- */

/*
 * Walk the bulk at @path with the streaming API.  With @print set, print
 * each record (after its checksum is verified) as one JSON line on stdout;
 * otherwise only count.  Attachment data is skipped by the reader.
 */
static int
walk(const char *path, int print, uint64_t *count)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_source src;
    struct sl_err err;
    json_t *meta = NULL;
    json_t *atts = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    int fd = -1;
    int rc = 0;

    *count = 0;
    sl_err_clear(&err);
    fd = open_input(path);
    if (fd < 0) {
        return EXIT_FAIL;
    }
    sl_source_fd(&src, &fd);
    rc = sl_bulk_reader_new(&src, NULL, &r, &err);
    if (rc != 0) {
        rc = report(path, "%s", err.message);
        goto out;
    }
    for (;;) {
        rc = sl_bulk_reader_next_meta(r, &meta, &err);
        if (rc < 0) {
            rc = report(path, "%s", err.message);
            goto out;
        }
        if (rc == 0) {
            break;
        }
        for (;;) {
            rc = sl_bulk_reader_attachment_next(r, &name, &size, &err);
            if (rc < 0) {
                rc = report(path, "%s", err.message);
                goto out;
            }
            if (rc == 0) {
                break;
            }
            if (!print) {
                continue;
            }
            if (atts == NULL) {
                atts = json_object();
            }
            if (json_object_set_new(
                    atts, name, json_pack("{s:I}", "size", (json_int_t)size)) !=
                0) {
                rc = report(path, "out of memory");
                goto out;
            }
        }
        (*count)++;
        if (print) {
            if (atts != NULL) {
                (void)json_object_set_new(meta, "_attachments", atts);
                atts = NULL;
            }
            if (json_dumpf(meta, stdout, JSON_COMPACT) != 0 ||
                fputc('\n', stdout) == EOF) {
                rc = report("stdout", "write error: %s", sl_errno_str(errno));
                goto out;
            }
        }
        json_decref(meta);
        meta = NULL;
    }
    rc = 0;

out:
    json_decref(atts);
    json_decref(meta);
    sl_bulk_reader_free(r);
    close_input(fd);
    return rc;
}

static int
cmd_cat(char **args, int nargs)
{
    uint64_t n = 0;
    int rc = 0;
    int i = 0;

    for (i = 0; i < nargs && rc == 0; i++) {
        rc = walk(args[i], 1, &n);
    }

    if (fflush(stdout) != 0 && rc == 0) {
        rc = report("stdout", "write error: %s", sl_errno_str(errno));
    }
    return rc;
}

static int
cmd_count(char **args, int nargs)
{
    uint64_t n = 0;
    int rc = walk(args[0], 0, &n);

    (void)nargs; /* exactly 1 */
    if (rc != 0) {
        return rc;
    }
    if (printf("%llu\n", (unsigned long long)n) < 0 || fflush(stdout) != 0) {
        return report("stdout", "write error: %s", sl_errno_str(errno));
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * from-jsonl.
 * --------------------------------------------------------------------- */

/* Buffered line reader over a file descriptor, bounded by the sl_buf. */
struct line_reader {
    int fd;
    unsigned char buf[IO_CHUNK];
    size_t pos;
    size_t len;
    int eof;
};

/*
 * Read the next line (without its '\n') into @line, whose limit bounds the
 * line length.  Returns 1 for a line, 0 at end of input, SL_ETOOLARGE for
 * an over-long line or a read error.  A last line without '\n' counts.
 */
static int
read_line(struct line_reader *lr, struct sl_buf *line)
{
    int got = 0;
    int rc = 0;

    sl_buf_reset(line);
    for (;;) {
        const unsigned char *nl = NULL;
        size_t k = 0;

        if (lr->pos == lr->len) {
            ssize_t n = 0;

            if (lr->eof) {
                return got;
            }
            n = read(lr->fd, lr->buf, sizeof(lr->buf));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                return sl_err_from_errno(errno);
            }
            lr->pos = 0;
            lr->len = (size_t)n;
            lr->eof = n == 0;
            continue;
        }
        got = 1;
        nl = memchr(lr->buf + lr->pos, '\n', lr->len - lr->pos);
        k = nl != NULL ? (size_t)(nl - (lr->buf + lr->pos)) : lr->len - lr->pos;
        rc = sl_buf_append(line, lr->buf + lr->pos, k);
        if (rc != 0) {
            return rc;
        }
        lr->pos += k;
        if (nl != NULL) {
            lr->pos++;
            return 1;
        }
    }
}

/*
 * Decode standard base64 (padding optional, no whitespace) into a new
 * block (caller frees with sl_free).  Checks the alphabet first, because
 * EVP_DecodeBlock skips some whitespace and keeps padding bytes.
 */
static int
base64_decode(const char *s, size_t len, unsigned char **out, size_t *outlen)
{
    unsigned char *in = NULL;
    unsigned char *buf = NULL;
    size_t padded = len;
    size_t pad = 0;
    size_t i = 0;
    int n = 0;
    int rc = 0;

    *out = NULL;
    *outlen = 0;
    if (len % 4 == 1 || len > (size_t)INT_MAX - 4) {
        return SL_EINVAL;
    }
    while (padded % 4 != 0) {
        padded++;
    }
    in = sl_malloc(padded + 1);
    memcpy(in, s, len);
    memset(in + len, '=', padded - len);
    for (i = 0; i < padded; i++) {
        unsigned char c = in[i];

        if (c == '=') {
            pad++;
            continue;
        }
        if (pad > 0 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') || c == '+' || c == '/')) {
            rc = SL_EINVAL;
            goto out;
        }
    }
    if (pad > 2) {
        rc = SL_EINVAL;
        goto out;
    }
    buf = sl_malloc(padded / 4 * 3 + 1);
    n = EVP_DecodeBlock(buf, in, (int)padded);
    if (n < 0 || (size_t)n < pad) {
        rc = SL_EINVAL;
        goto out;
    }
    *out = buf;
    *outlen = (size_t)n - pad;
    buf = NULL;

out:
    sl_free(in);
    sl_free(buf);
    return rc;
}

/*
 * Stream the regular file @path into attachment @name: the size comes from
 * fstat and must still hold when the data has been copied.
 */
static int
add_file_attachment(struct sl_bulk_writer *w,
                    const char *name,
                    const char *path,
                    struct sl_err *err)
{
    unsigned char *buf = NULL;
    struct stat st;
    uint64_t total = 0;
    int fd = -1;
    int rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        rc = sl_err_set(err,
                        sl_err_from_errno(errno),
                        NULL,
                        "attachment \"%s\": %s: %s",
                        name,
                        path,
                        sl_errno_str(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = sl_err_set(err,
                        SL_EINVAL,
                        NULL,
                        "attachment \"%s\": %s: not a regular file",
                        name,
                        path);
        goto out;
    }
    rc = sl_bulk_writer_attachment_begin(w, name, (uint64_t)st.st_size);
    if (rc != 0) {
        rc = sl_err_set(
            err, rc, NULL, "attachment \"%s\": %s", name, sl_strerror(rc));
        goto out;
    }
    buf = sl_malloc(IO_CHUNK);
    for (;;) {
        ssize_t n = read(fd, buf, IO_CHUNK);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            rc = sl_err_set(err,
                            sl_err_from_errno(errno),
                            NULL,
                            "attachment \"%s\": %s: %s",
                            name,
                            path,
                            sl_errno_str(errno));
            goto out;
        }
        if (n == 0) {
            break;
        }
        if ((uint64_t)n > (uint64_t)st.st_size - total) {
            break; /* grew while we read: reported below */
        }
        rc = sl_bulk_writer_attachment_write(w, buf, (size_t)n);
        if (rc != 0) {
            rc = sl_err_set(err,
                            rc,
                            NULL,
                            "attachment \"%s\": cannot write: %s",
                            name,
                            sl_strerror(rc));
            goto out;
        }
        total += (uint64_t)n;
    }
    if (total != (uint64_t)st.st_size) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        NULL,
                        "attachment \"%s\": %s changed size while read",
                        name,
                        path);
        goto out;
    }

out:
    sl_free(buf);
    if (fd >= 0) {
        (void)close(fd);
    }
    return rc;
}

/* Write attachment @name from its spec {"base64": ...} or {"file": ...}. */
static int
add_attachment(struct sl_bulk_writer *w,
               const char *name,
               const json_t *spec,
               struct sl_err *err)
{
    const json_t *b64 = json_object_get(spec, "base64");
    const json_t *file = json_object_get(spec, "file");
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = 0;

    if (!json_is_object(spec) || json_object_size(spec) != 1 ||
        (!json_is_string(b64) && !json_is_string(file))) {
        return sl_err_set(err,
                          SL_EINVAL,
                          NULL,
                          "attachment \"%s\": expected {\"base64\": \"...\"} "
                          "or {\"file\": \"PATH\"}",
                          name);
    }
    if (strlen(name) > SL_ATTACHMENT_NAME_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          NULL,
                          "attachment name longer than %d bytes",
                          SL_ATTACHMENT_NAME_MAX);
    }
    if (file != NULL) {
        return add_file_attachment(w, name, json_string_value(file), err);
    }
    rc = base64_decode(
        json_string_value(b64), json_string_length(b64), &data, &len);
    if (rc != 0) {
        return sl_err_set(
            err, rc, NULL, "attachment \"%s\": invalid base64", name);
    }
    rc = sl_bulk_writer_attachment_begin(w, name, len);
    if (rc == 0) {
        rc = sl_bulk_writer_attachment_write(w, data, len);
    }
    sl_free(data);
    if (rc != 0) {
        return sl_err_set(
            err, rc, NULL, "attachment \"%s\": %s", name, sl_strerror(rc));
    }
    return 0;
}

/* Parse one JSON line and write it as a record; details in @err. */
static int
add_line(struct sl_bulk_writer *w,
         const char *text,
         size_t len,
         struct sl_err *err)
{
    json_error_t jerr;
    json_t *obj = NULL;
    json_t *atts = NULL;
    const json_t *id = NULL;
    const char *name = NULL;
    json_t *spec = NULL;
    int rc = 0;

    obj = json_loadb(text, len, 0, &jerr);
    if (obj == NULL) {
        return sl_err_set(err,
                          SL_EBADJSON,
                          NULL,
                          "invalid JSON at column %d: %s",
                          jerr.column,
                          jerr.text);
    }
    if (!json_is_object(obj)) {
        rc = sl_err_set(err, SL_EINVAL, NULL, "not a JSON object");
        goto out;
    }
    id = json_object_get(obj, "_recordid");
    if (!json_is_string(id) || json_string_length(id) == 0) {
        rc = sl_err_set(
            err, SL_EINVAL, NULL, "missing or empty string \"_recordid\"");
        goto out;
    }
    atts = json_incref(json_object_get(obj, "_attachments"));
    if (atts != NULL) {
        (void)json_object_del(obj, "_attachments");
        if (!json_is_object(atts)) {
            rc = sl_err_set(
                err, SL_EINVAL, NULL, "\"_attachments\" must be an object");
            goto out;
        }
    }
    rc = sl_bulk_writer_record_begin(w, obj);
    if (rc != 0) {
        rc = sl_err_set(
            err, rc, NULL, "cannot write the record: %s", sl_strerror(rc));
        goto out;
    }
    json_object_foreach(atts, name, spec)
    {
        rc = add_attachment(w, name, spec, err);
        if (rc != 0) {
            goto out;
        }
    }
    rc = sl_bulk_writer_record_end(w);
    if (rc != 0) {
        rc = sl_err_set(
            err, rc, NULL, "cannot write the record: %s", sl_strerror(rc));
        goto out;
    }

out:
    json_decref(atts);
    json_decref(obj);
    return rc;
}

/* True when the line holds only JSON whitespace (such lines are skipped). */
static int
blank(const char *s, size_t len)
{
    size_t i = 0;

    for (i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') {
            return 0;
        }
    }
    return 1;
}

/*
 * Read every line of @lr and write it to @w, then finish the bulk.
 * Reports the failing line itself and returns EXIT_FAIL on error.
 */
static int
convert(struct line_reader *lr, struct sl_bulk_writer *w, const char *in)
{
    struct sl_buf line;
    struct sl_err err;
    unsigned long long lineno = 0;
    int rc = 0;

    sl_buf_init(&line, LINE_MAX_BYTES);
    for (;;) {
        rc = read_line(lr, &line);
        if (rc == 0) {
            break;
        }
        lineno++;
        if (rc == SL_ETOOLARGE) {
            rc = report(in, "line %llu: longer than 64 MiB", lineno);
            goto out;
        }
        if (rc < 0) {
            rc = report(
                in, "line %llu: read error: %s", lineno, sl_strerror(rc));
            goto out;
        }
        if (blank(line.data, line.len)) {
            continue;
        }
        sl_err_clear(&err);
        rc = add_line(w, line.data, line.len, &err);
        if (rc != 0) {
            rc = report(in, "line %llu: %s", lineno, err.message);
            goto out;
        }
    }
    rc = sl_bulk_writer_finish(w);
    if (rc != 0) {
        rc = report(in, "cannot finish the bulk: %s", sl_strerror(rc));
        goto out;
    }

out:
    sl_buf_free(&line);
    return rc;
}

static int
cmd_from_jsonl(char **args, int nargs)
{
    const char *in = args[0];
    const char *out = args[1];
    struct line_reader *lr = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    char *tmp = NULL;
    int out_fd = -1;
    int rc = 0;

    (void)nargs; /* exactly 2 */
    lr = sl_calloc(1, sizeof(*lr));
    lr->fd = open_input(in);
    if (lr->fd < 0) {
        rc = EXIT_FAIL;
        goto out;
    }
    tmp = sl_asprintf("%s.tmp.%ld", out, (long)getpid());
    out_fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (out_fd < 0) {
        rc = report(tmp, "%s", sl_errno_str(errno));
        SL_FREE(tmp); /* not ours: do not unlink it */
        goto out;
    }
    sl_sink_fd(&sink, &out_fd);
    rc = sl_bulk_writer_new(&sink, &w);
    if (rc != 0) {
        rc = report(tmp, "%s", sl_strerror(rc));
        goto out;
    }
    rc = convert(lr, w, in);
    if (rc != 0) {
        goto out;
    }
    if (fsync(out_fd) != 0) {
        rc = report(tmp, "fsync: %s", sl_errno_str(errno));
        goto out;
    }
    rc = close(out_fd);
    out_fd = -1;
    if (rc != 0) {
        rc = report(tmp, "close: %s", sl_errno_str(errno));
        goto out;
    }
    if (rename(tmp, out) != 0) {
        rc = report(out, "rename: %s", sl_errno_str(errno));
        goto out;
    }
    SL_FREE(tmp);

out:
    sl_bulk_writer_free(w);
    if (out_fd >= 0) {
        (void)close(out_fd);
    }
    if (tmp != NULL) {
        (void)unlink(tmp);
        sl_free(tmp);
    }
    if (lr->fd >= 0) {
        close_input(lr->fd);
    }
    sl_free(lr);
    return rc;
}

/* ------------------------------------------------------------------------
 * Dispatch.
 * --------------------------------------------------------------------- */
struct bulk_cmd {
    const char *name;
    int nargs; /* exact number of operands; -1: one or more */
    int (*run)(char **args, int nargs); /* args holds nargs operands */
};

static const struct bulk_cmd commands[] = {
    {"cat", -1, cmd_cat},
    {"count", 1, cmd_count},
    {"from-jsonl", 2, cmd_from_jsonl},
};

static int
is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int
sl_cli_bulk_main(int argc, char **argv)
{
    const struct bulk_cmd *cmd = NULL;
    char **args = NULL;
    char msg[256];
    int nargs = 0;
    int opts = 1;
    size_t i = 0;
    int a = 0;
    int rc = 0;

    if (argc < 2) {
        return usage_error("missing command");
    }
    if (is_help(argv[1])) {
        (void)fputs(usage_text, stdout);
        return 0;
    }
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            cmd = &commands[i];
        }
    }
    if (cmd == NULL) {
        (void)snprintf(msg, sizeof(msg), "unknown command '%s'", argv[1]);
        return usage_error(msg);
    }
    args = sl_calloc((size_t)argc, sizeof(*args)); /* operands < argc */
    for (a = 2; a < argc; a++) {
        const char *arg = argv[a];

        if (opts && is_help(arg)) {
            (void)fputs(usage_text, stdout);
            goto out;
        }
        if (opts && strcmp(arg, "--") == 0) {
            opts = 0;
            continue;
        }
        if (opts && arg[0] == '-' && arg[1] != '\0') {
            (void)snprintf(msg, sizeof(msg), "unknown option '%s'", arg);
            rc = usage_error(msg);
            goto out;
        }
        if (nargs == cmd->nargs) {
            (void)snprintf(
                msg, sizeof(msg), "%s: too many arguments", cmd->name);
            rc = usage_error(msg);
            goto out;
        }
        args[nargs++] = argv[a];
    }
    if (nargs == 0 || (cmd->nargs >= 0 && nargs != cmd->nargs)) {
        (void)snprintf(msg, sizeof(msg), "%s: missing argument", cmd->name);
        rc = usage_error(msg);
        goto out;
    }
    rc = cmd->run(args, nargs);
out:
    sl_free(args);
    return rc;
}
