/*
 * Embedded full-text index, the columns of a web document's URL (schema
 * 8, docs/index.md "Columns"): sl_url_host(url), its host in lower case,
 * and sl_url_path(url), its path decoded, both read by libcurl's URL
 * parser; NULL for anything that is not an http or https URL.  The upsert
 * fills the host column and, for a document without a path, the path
 * column with them.
 */
#include <string.h>

#include <curl/curl.h>

#include "index/index_int.h"

/* Part @what of http(s) URL @url as libcurl gives it (@flags), or NULL: a
 * string the caller frees with curl_free. */
static char *
url_part(const char *url, CURLUPart what, unsigned flags)
{
    CURLU *u = curl_url();
    char *scheme = NULL;
    char *part = NULL;
    int web = 0;

    if (u == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        curl_url_cleanup(u);
        return NULL;
    }
    web = strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0;
    if (!web || curl_url_get(u, what, &part, flags) != CURLUE_OK) {
        part = NULL;
    }
    curl_free(scheme);
    curl_url_cleanup(u);
    return part;
}

/* The text of argument 0, NUL-terminated, or NULL (not text). */
static const char *
text_arg(sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
        return NULL;
    }
    return (const char *)sqlite3_value_text(argv[0]);
}

/* sl_url_host(url): the host in lower case, or NULL. */
static void
host_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *url = text_arg(argv);
    char *host = url != NULL ? url_part(url, CURLUPART_HOST, 0) : NULL;
    char *p = host;

    (void)argc;
    for (; p != NULL && *p != '\0'; p++) {
        if (*p >= 'A' && *p <= 'Z') {
            *p = (char)(*p - 'A' + 'a');
        }
    }
    if (host != NULL) {
        sqlite3_result_text(ctx, host, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_result_null(ctx);
    }
    curl_free(host);
}

/* sl_url_path(url): the path percent-decoded ("/a b/c.html"), as it is
 * written when the decoded bytes are not UTF-8 or hold a NUL; NULL. */
static void
path_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *url = text_arg(argv);
    char *raw = url != NULL ? url_part(url, CURLUPART_PATH, 0) : NULL;
    char *dec = NULL;
    int n = 0;

    (void)argc;
    if (raw == NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    dec = curl_easy_unescape(NULL, raw, 0, &n);
    if (dec != NULL && strlen(dec) == (size_t)n &&
        sl_utf8_valid(dec, (size_t)n)) {
        sqlite3_result_text(ctx, dec, n, SQLITE_TRANSIENT);
    } else {
        sqlite3_result_text(ctx, raw, -1, SQLITE_TRANSIENT);
    }
    curl_free(dec);
    curl_free(raw);
}

int
sl__index_url_functions(sqlite3 *db)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int src = sqlite3_create_function_v2(
        db, "sl_url_host", 1, flags, NULL, host_fn, NULL, NULL, NULL);

    if (src == SQLITE_OK) {
        src = sqlite3_create_function_v2(
            db, "sl_url_path", 1, flags, NULL, path_fn, NULL, NULL, NULL);
    }
    return src;
}
