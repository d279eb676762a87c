/*
 * The field filters of the query language (qfields.c): fields and the SQL
 * conditions over `docs_cols d` their values become.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "index/index_int.h"
#include "index/qparse_int.h"

/* ------------------------------------------------------------------------
 * Field filters: SQL over `docs_cols d`.
 * --------------------------------------------------------------------- */

static struct qnode *
filter_node(struct qp *qp, const char *sql, int nparams, ...)
{
    struct qnode *f = sl__qp_node(qp, Q_FILTER);
    va_list ap;
    int i = 0;

    f->text = sl_strdup(sql);
    va_start(ap, nparams);
    for (i = 0; i < nparams && i < 4; i++) {
        f->params[f->nparams++] = sl_strdup(va_arg(ap, const char *));
    }
    va_end(ap);
    return f;
}

/* A date YYYY, YYYY-MM or YYYY-MM-DD. */
static int
date_ok(const char *s, size_t n)
{
    static const char shape[] = "dddd-dd-dd";
    size_t i = 0;

    if (n != 4 && n != 7 && n != 10) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != '-') {
            return 0;
        }
    }
    return 1;
}

/* A size: digits with an optional fraction and k, M, G or T (1024
 * based), an optional B. */
static int
size_parse(const char *s, size_t n, uint64_t *out)
{
    char buf[64];
    char *end = NULL;
    double v = 0;
    double mult = 1;

    if (n == 0 || n >= sizeof(buf) || !isdigit((unsigned char)s[0])) {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    v = strtod(buf, &end);
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1024.0 * 1024;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 't':
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'b' || *end == 'B') {
        end++;
    }
    if (*end != '\0' || v * mult > 9.0e18) {
        return -1;
    }
    *out = (uint64_t)(v * mult);
    return 0;
}

/* One bound of a range as SQL for column expression @col compared with
 * @op; @date: a date (compared on its first characters), else a size. */
static int
bound_sql(struct sl_buf *b,
          const char *col,
          const char *op,
          const char *v,
          size_t n,
          int date)
{
    uint64_t size = 0;

    if (date) {
        if (!date_ok(v, n)) {
            return -1;
        }
        (void)sl_buf_appendf(
            b, "substr(%s, 1, %zu) %s '%.*s'", col, n, op, (int)n, v);
        return 0;
    }
    if (size_parse(v, n, &size) != 0) {
        return -1;
    }
    (void)sl_buf_appendf(b, "%s %s %llu", col, op, (unsigned long long)size);
    return 0;
}

/*
 * modified:, created: and size: values: V, A..B, ..B, A.., >V, >=V, <V,
 * <=V, =V.
 */
static struct qnode *
range_filter(struct qp *qp,
             const char *field,
             const char *col,
             const char *v,
             size_t at,
             int date)
{
    const char *dots = strstr(v, "..");
    struct sl_buf b;
    struct qnode *f = NULL;
    const char *op = "=";
    int rc = 0;

    sl_buf_init(&b, 1024);
    if (dots != NULL) {
        if (dots > v) {
            rc = bound_sql(&b, col, ">=", v, (size_t)(dots - v), date);
        }
        if (rc == 0 && dots[2] != '\0') {
            (void)sl_buf_appendf(&b, "%s", dots > v ? " AND " : "");
            rc = bound_sql(&b, col, "<=", dots + 2, strlen(dots + 2), date);
        }
        rc = rc == 0 && b.len == 0 ? -1 : rc;
    } else {
        size_t k = strspn(v, "<>=");

        if (k == 2 && v[1] == '=' && v[0] != '=') {
            op = v[0] == '<' ? "<=" : ">=";
        } else if (k == 1) {
            op = v[0] == '<' ? "<" : v[0] == '>' ? ">" : "=";
        } else if (k != 0) {
            rc = -1;
        }
        rc = rc == 0 ? bound_sql(&b, col, op, v + k, strlen(v + k), date) : rc;
    }
    if (rc != 0 || b.failed) {
        sl_buf_free(&b);
        (void)sl__qp_fail(
            qp,
            at,
            date ? "%s: wants a date YYYY, YYYY-MM or YYYY-MM-DD, "
                   "or a range such as 2025-01..2025-06 or >2024"
                 : "%s: wants a size such as 10k, 1.5M or 2G, or a "
                   "range such as 1M..10M or >100k",
            field);
        return NULL;
    }
    f = filter_node(qp, b.data, 0);
    sl_buf_free(&b);
    return f;
}

/* type: short names and the MIME types they stand for. */
static const struct {
    const char *name;
    const char *sql;
} type_names[] = {
    {"pdf", "d.mime = 'application/pdf'"},
    {"html", "d.mime IN ('text/html', 'application/xhtml+xml')"},
    {"text", "d.mime = 'text/plain'"},
    {"txt", "d.mime = 'text/plain'"},
    {"doc",
     "d.mime IN ('application/msword', 'application/vnd.openxmlformats-"
     "officedocument.wordprocessingml.document', "
     "'application/vnd.oasis.opendocument.text', 'application/rtf', "
     "'text/rtf')"},
    {"sheet",
     "d.mime IN ('application/vnd.ms-excel', 'application/vnd.openxmlformats-"
     "officedocument.spreadsheetml.sheet', "
     "'application/vnd.oasis.opendocument.spreadsheet', 'text/csv')"},
    {"presentation",
     "d.mime IN ('application/vnd.ms-powerpoint', "
     "'application/vnd.openxmlformats-officedocument.presentationml."
     "presentation', 'application/vnd.oasis.opendocument.presentation')"},
    {"email", "d.mime IN ('message/rfc822', 'application/mbox')"},
    {"epub", "d.mime = 'application/epub+zip'"},
    {"xml", "d.mime IN ('application/xml', 'text/xml')"},
    {"image", "d.mime LIKE 'image/%'"},
    {"audio", "d.mime LIKE 'audio/%'"},
    {"video", "d.mime LIKE 'video/%'"},
    {"archive",
     "d.mime IN ('application/zip', 'application/x-tar', 'application/gzip', "
     "'application/x-7z-compressed', 'application/x-bzip2', "
     "'application/x-xz', 'application/vnd.rar', 'application/x-gzip', "
     "'application/x-zip-compressed', 'application/x-rar-compressed')"},
};

static struct qnode *
type_filter(struct qp *qp, const char *v, size_t at)
{
    char list[300];
    size_t used = 0;
    size_t i = 0;
    const char *slash = strchr(v, '/');

    if (slash != NULL && strcmp(slash, "/*") == 0) {
        char *prefix = sl_asprintf("%.*s%%", (int)(slash - v) + 1, v);
        struct qnode *f = NULL;

        f = filter_node(qp, "d.mime LIKE ?", 1, prefix);
        sl_free(prefix);
        return f;
    }
    if (slash != NULL) {
        return filter_node(qp, "d.mime = ?", 1, v);
    }
    for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strcasecmp(v, type_names[i].name) == 0) {
            return filter_node(qp, type_names[i].sql, 0);
        }
        used += (size_t)snprintf(list + used,
                                 sizeof(list) - used,
                                 "%s%s",
                                 i ? ", " : "",
                                 type_names[i].name);
    }
    (void)snprintf(list + used,
                   sizeof(list) - used,
                   " or a MIME type such as text/html or image/*");
    (void)sl__qp_fail(qp, at, "type: wants one of %s", list);
    return NULL;
}

/* The host of host:; letters, digits, '.', '-', ':', '[' and ']' only. */
static int
host_ok(const char *v)
{
    for (; *v != '\0'; v++) {
        if (!isalnum((unsigned char)*v) && strchr(".-:[]", *v) == NULL) {
            return 0;
        }
    }
    return 1;
}

/* host:@v, the host column (the host facet's values); with a port
 * ("example.com:8080") the URL's authority must name that port too. */
static struct qnode *
host_filter(struct qp *qp, const char *v, size_t at)
{
    const char *colon = strrchr(v, ':');
    const char *close = strrchr(v, ']');
    struct qnode *f = NULL;
    char *name = NULL;

    if (v[0] == '\0' || !host_ok(v)) {
        (void)sl__qp_fail(qp, at, "host: wants a host name");
        return NULL;
    }
    if (v[0] == '[' ? close == NULL || colon != close + 1
                    : colon == NULL || strchr(v, ':') != colon) {
        return filter_node(qp, "d.host = lower(?)", 1, v);
    }
    name = sl_strndup(v, (size_t)(colon - v));
    /* the URL's authority (after "://") is @v, then the end, '/', '?'
     * or '#' */
    f = filter_node(qp,
                    "(d.host = lower(?) AND rtrim(substr(lower(d.url),"
                    " instr(d.url, '://') + 3, length(?) + 1), '/?#') ="
                    " lower(?))",
                    3,
                    name,
                    v,
                    v);
    sl_free(name);
    return f;
}

/* The value @v of a filter field @name at @at; NULL after an error. */
struct qnode *
sl__qfield_filter(struct qp *qp, const char *name, const char *v, size_t at)
{
    char *a = NULL;
    char *b = NULL;
    struct qnode *f = NULL;
    size_t n = strlen(v);

    if (strcmp(name, "source") == 0) {
        return filter_node(qp,
                           "EXISTS (SELECT 1 FROM doc_sources s WHERE s.doc ="
                           " d.id AND s.source = ?)",
                           1,
                           v);
    }
    if (strcmp(name, "path") == 0 || strcmp(name, "dir") == 0) {
        while (n > 1 && v[n - 1] == '/') {
            n--;
        }
        if (v[0] == '/') { /* a folder and what is under it */
            a = sl_strndup(v, n);
            b = sl_asprintf("%s/", n > 1 ? a : "");
            f = filter_node(qp,
                            "(d.path = ? OR substr(d.path, 1, length(?)) = ?)",
                            3,
                            a,
                            b,
                            b);
        } else { /* folders of that name anywhere */
            a = sl_asprintf("/%.*s/", (int)n, v);
            f = filter_node(qp, "instr('/' || d.path, ?) > 0", 1, a);
        }
    } else if (strcmp(name, "ext") == 0) {
        size_t i = 0;

        /* ends with ".ext", ASCII letters in any case: LIKE compares
         * them so (as lower() did, at twice the cost), its wildcards
         * and escape character escaped */
        b = sl_asprintf(".%s", v[0] == '.' ? v + 1 : v);
        a = sl_malloc(2 * strlen(b) + 2);
        a[0] = '%';
        for (i = 0, n = 1; b[i] != '\0'; i++) {
            if (b[i] == '%' || b[i] == '_' || b[i] == '\\') {
                a[n++] = '\\';
            }
            a[n++] = b[i];
        }
        a[n] = '\0';
        f = filter_node(
            qp, "coalesce(d.path, d._recordid) LIKE ? ESCAPE '\\'", 1, a);
    } else if (strcmp(name, "type") == 0 || strcmp(name, "mime") == 0) {
        return type_filter(qp, v, at);
    } else if (strcmp(name, "modified") == 0 || strcmp(name, "created") == 0) {
        a = sl_asprintf("d.%s", name);
        f = range_filter(qp, name, a, v, at, 1);
    } else if (strcmp(name, "size") == 0) {
        return range_filter(qp, name, "d.size", v, at, 0);
    } else if (strcmp(name, "in") == 0) {
        /* elements of the compound whose id is, or ends with, @v */
        a = sl_asprintf("/%s!/", v);
        f = filter_node(qp, "instr('/' || d._recordid, ?) > 0", 1, a);
    } else if (strcmp(name, "url") == 0) {
        f = filter_node(qp,
                        "substr(coalesce(d.url, d._recordid), 1, length(?))"
                        " = ?",
                        2,
                        v,
                        v);
    } else if (strcmp(name, "host") == 0) {
        return host_filter(qp, v, at);
    }
    sl_free(a);
    sl_free(b);
    return f;
}

/* The fields: those of the FTS table search words in one column; the
 * others filter. */
const struct sl__qfield sl__qfields[] = {
    {"title", "title"},
    {"author", "author"},
    {"text", "text"},
    {"content", "text"},
    {"source", NULL},
    {"path", NULL},
    {"dir", NULL},
    {"ext", NULL},
    {"type", NULL},
    {"mime", NULL},
    {"modified", NULL},
    {"created", NULL},
    {"size", NULL},
    {"in", NULL},
    {"url", NULL},
    {"host", NULL},
    {NULL, NULL},
};

int
sl__qfield_find(const char *s, size_t n)
{
    size_t i = 0;

    for (i = 0; sl__qfields[i].name != NULL; i++) {
        if (strlen(sl__qfields[i].name) == n &&
            strncasecmp(s, sl__qfields[i].name, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* sl_ext(path): after the last '.' of the last segment (and of an
 * archive element's name), 1 to 10 letters and digits, in lower case. */
static void
ext_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *p = (const char *)sqlite3_value_text(argv[0]);
    const char *seg = NULL;
    const char *dot = NULL;
    char ext[16];
    size_t n = 0;
    size_t i = 0;

    (void)argc;
    if (p == NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    seg = strrchr(p, '/');
    seg = seg != NULL ? seg + 1 : p;
    dot = strrchr(seg, '.');
    n = dot != NULL ? strlen(dot + 1) : 0;
    for (i = 0; i < n && i < sizeof(ext) - 1; i++) {
        if (!isalnum((unsigned char)dot[1 + i])) {
            break;
        }
        ext[i] = (char)tolower((unsigned char)dot[1 + i]);
    }
    if (n == 0 || n > 10 || i != n || dot == seg) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_text(ctx, ext, (int)n, SQLITE_TRANSIENT);
}

int
sl__index_query_functions(sqlite3 *db)
{
    return sqlite3_create_function_v2(db,
                                      "sl_ext",
                                      1,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC |
                                          SQLITE_INNOCUOUS,
                                      NULL,
                                      ext_fn,
                                      NULL,
                                      NULL,
                                      NULL);
}
