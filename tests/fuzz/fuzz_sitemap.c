/*
 * Sitemaps (web/sitemap.c), plain and gzip.  The first input byte chooses
 * the chunk size and the URL limit, the rest is the sitemap, parsed once
 * whole and once cut into chunks.  Checks: both give the same result
 * code and, when that is 0, the same summary and locs (the parser takes
 * input cut anywhere; after an error the parses may have got to
 * different points), every loc
 * is a URL in normal form (a fixed point of sl_web_url_normalize), a
 * lastmod is at most SL_WEB_SITEMAP_LASTMOD_MAX bytes, the limit holds.
 * SL_ECORRUPT and SL_ETRUNCATED count as one result code (bad_xml), and
 * the two parses are compared only for input libxml2 reads the same
 * however it is cut (plain_input).
 */
#include <strings.h>
#include <zlib.h>

#include "core/sl.h"
#include "web/web.h"

#include "fuzz.h"

#define SITEMAP_URL "http://example.com/dir/sitemap.xml"

struct seen {
    struct sl_buf log; /* "nested lastmod url\n" per loc */
    size_t max;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    return 0;
}

static int
on_loc(void *ctx, const char *url, const char *lastmod, int nested)
{
    struct seen *s = ctx;
    char *again = NULL;
    int rc = sl_web_url_normalize(url, &again);

    SL_FUZZ_CHECK(rc == 0 && strcmp(again, url) == 0,
                  "loc '%s' is not in normal form (%s '%s')",
                  url,
                  sl_err_name(rc),
                  again != NULL ? again : "");
    SL_FUZZ_CHECK(lastmod == NULL ||
                      strlen(lastmod) <= SL_WEB_SITEMAP_LASTMOD_MAX,
                  "lastmod of %zu bytes",
                  strlen(lastmod));
    SL_FUZZ_CHECK(nested == 0 || nested == 1, "nested %d", nested);
    sl_free(again);
    (void)sl_buf_appendf(
        &s->log, "%d %s %s\n", nested, lastmod != NULL ? lastmod : "-", url);
    return 0;
}

/* Parse @n bytes at @p in chunks of @chunk (0: at once) into @s. */
static int
parse(const uint8_t *p,
      size_t n,
      size_t chunk,
      size_t max_urls,
      struct seen *s,
      struct sl_web_sitemap_summary *sum)
{
    struct sl_web_sitemap *sm = NULL;
    size_t off = 0;
    int rc = 0;

    sl_buf_init(&s->log, 64u << 20);
    memset(sum, 0, sizeof(*sum));
    rc = sl_web_sitemap_begin(SITEMAP_URL, max_urls, on_loc, s, &sm);
    SL_FUZZ_CHECK(rc == 0, "begin: %s", sl_err_name(rc));
    do {
        size_t k = chunk == 0 || n - off < chunk ? n - off : chunk;

        rc = sl_web_sitemap_feed(sm, (const char *)p + off, k);
        off += k;
    } while (rc == 0 && off < n);
    rc = sl_web_sitemap_end(sm, sum);
    SL_FUZZ_CHECK(
        sum->reported <=
            (max_urls != 0 ? max_urls : SL_WEB_SITEMAP_DEFAULT_MAX_URLS),
        "%zu reported",
        sum->reported);
    return rc;
}

/*
 * Not well-formed XML is SL_ECORRUPT when libxml2 sees it while a chunk
 * is fed and SL_ETRUNCATED when it sees it only at the end, and how far
 * the push parser gets before the end depends on the cutting ("<E\">]><"
 * whole: SL_ECORRUPT; in chunks of 6: SL_ETRUNCATED).  libxml2's error
 * codes do not tell a cut document from a broken one either (a truncated
 * urlset ends with XML_ERR_DOCUMENT_END), so both count as one here.
 */
static int
bad_xml(int rc)
{
    return rc == SL_ECORRUPT || rc == SL_ETRUNCATED;
}

/*
 * Whether libxml2 reads the XML @p (@n bytes) the same however it is cut,
 * as far as we know: valid UTF-8 without NUL bytes or an encoding
 * declaration.  Fed in pieces, libxml2 2.9.14 detects and switches
 * encodings differently (UCS-4 detection cut between chunks gives a
 * well-formed empty document; "UT-F8" declared, a root '<ur\xff' is
 * SL_EINVAL at once and SL_ETRUNCATED in chunks of 6).
 */
static int
plain_xml(const uint8_t *p, size_t n)
{
    size_t i = 0;

    if (memchr(p, 0, n) != NULL || !sl_utf8_valid(p, n)) {
        return 0;
    }
    for (i = 0; i + 8 <= n; i++) {
        if (strncasecmp((const char *)p + i, "encoding", 8) == 0) {
            return 0;
        }
    }
    return 1;
}

/* plain_xml for the input as the parser sees it: gzip is inflated. */
static int
plain_input(const uint8_t *p, size_t n)
{
    z_stream zs;
    unsigned char *out = NULL;
    size_t cap = 1u << 20;
    int zr = 0;
    int ok = 0;

    if (n < 2 || p[0] != 0x1f || p[1] != 0x8b) {
        return plain_xml(p, n);
    }
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 16) != Z_OK) {
        return 0;
    }
    out = sl_malloc(cap);
    zs.next_in = (unsigned char *)(uintptr_t)p;
    zs.avail_in = (unsigned)n;
    zs.next_out = out;
    zs.avail_out = (unsigned)cap;
    zr = inflate(&zs, Z_FINISH);
    /* one whole member, nothing after it, fits: else not compared */
    ok = zr == Z_STREAM_END && zs.avail_in == 0 &&
         plain_xml(out, cap - zs.avail_out);
    (void)inflateEnd(&zs);
    sl_free(out);
    return ok;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl_web_sitemap_summary s1;
    struct sl_web_sitemap_summary s2;
    struct seen a;
    struct seen b;
    size_t chunk = 0;
    size_t max_urls = 0;
    int rc1 = 0;
    int rc2 = 0;

    if (size < 1) {
        return 0;
    }
    chunk = 1 + (data[0] & 31u);
    max_urls = (data[0] & 0x80u) ? 3 : 0;
    rc1 = parse(data + 1, size - 1, 0, max_urls, &a, &s1);
    rc2 = parse(data + 1, size - 1, chunk, max_urls, &b, &s2);
    if (!plain_input(data + 1, size - 1)) {
        goto out;
    }
    SL_FUZZ_CHECK(rc1 == rc2 || (bad_xml(rc1) && bad_xml(rc2)),
                  "whole: %s, in chunks of %zu: %s",
                  sl_err_name(rc1),
                  chunk,
                  sl_err_name(rc2));
    /* after an error, how far each parse got may differ */
    SL_FUZZ_CHECK(rc1 != 0 ||
                      (a.log.len == b.log.len &&
                       (a.log.len == 0 ||
                        memcmp(a.log.data, b.log.data, a.log.len) == 0)),
                  "whole:\n%s\nin chunks of %zu:\n%s",
                  a.log.len > 0 ? a.log.data : "",
                  chunk,
                  b.log.len > 0 ? b.log.data : "");
    SL_FUZZ_CHECK(rc1 != 0 || memcmp(&s1, &s2, sizeof(s1)) == 0,
                  "summaries differ (reported %zu/%zu refused %zu/%zu "
                  "invalid %zu/%zu over %zu/%zu index %d/%d)",
                  s1.reported,
                  s2.reported,
                  s1.refused,
                  s2.refused,
                  s1.invalid,
                  s2.invalid,
                  s1.over_limit,
                  s2.over_limit,
                  s1.is_index,
                  s2.is_index);
out:
    sl_buf_free(&a.log);
    sl_buf_free(&b.log);
    return 0;
}
