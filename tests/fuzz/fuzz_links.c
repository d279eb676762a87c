/*
 * The streaming HTML link extractor (web/links.c).  The first input byte
 * chooses the chunk size, the link limit and the HTTP charset; the rest is
 * the page, parsed once whole without a resolution cache and once cut
 * into chunks through a cache.  Checks: both give the same result code,
 * summary and links (the extractor takes input cut anywhere, and the cache
 * changes nothing), every link is in normal form, the limit holds.  The
 * fuzz build parses HTML in blocks of 256 bytes (web/web.h), so pages cross
 * block ends.
 */
#include "core/sl.h"
#include "web/web.h"

#include "fuzz.h"

#define PAGE_URL "http://example.com/dir/page.html"

static const char *const charsets[] = {
    NULL, "utf-8", "iso-8859-1", "shift_jis"};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    return 0;
}

static int
on_link(void *ctx, const char *url, enum sl_web_link_kind kind)
{
    struct sl_buf *log = ctx;
    char *again = NULL;
    int rc = sl_web_url_normalize(url, &again);

    SL_FUZZ_CHECK(rc == 0 && strcmp(again, url) == 0,
                  "link '%s' is not in normal form (%s '%s')",
                  url,
                  sl_err_name(rc),
                  again != NULL ? again : "");
    SL_FUZZ_CHECK(
        strcmp(sl_web_link_kind_name(kind), "?") != 0, "kind %d", (int)kind);
    sl_free(again);
    (void)sl_buf_appendf(log, "%s %s\n", sl_web_link_kind_name(kind), url);
    return 0;
}

/* Extract the links of @n bytes at @p fed in chunks of @chunk (0: at once)
 * into @log, through a new cache when @cached. */
static int
extract(const uint8_t *p,
        size_t n,
        size_t chunk,
        int cached,
        const char *charset,
        size_t max_links,
        struct sl_buf *log,
        struct sl_web_links_summary *sum)
{
    struct sl_web_url_cache *cache = cached ? sl_web_url_cache_new(0) : NULL;
    struct sl_web_links *lx = NULL;
    size_t off = 0;
    int rc = 0;

    sl_buf_init(log, 64u << 20);
    memset(sum, 0, sizeof(*sum));
    rc = sl_web_links_begin(PAGE_URL, charset, max_links, on_link, log, &lx);
    SL_FUZZ_CHECK(rc == 0, "begin: %s", sl_err_name(rc));
    sl_web_links_use_cache(lx, cache);
    while (rc == 0 && off < n) {
        size_t k = chunk == 0 || n - off < chunk ? n - off : chunk;

        rc = sl_web_links_feed(lx, (const char *)p + off, k);
        off += k;
    }
    rc = sl_web_links_end(lx, sum);
    sl_web_url_cache_free(cache);
    SL_FUZZ_CHECK(sum->reported <=
                      (max_links != 0 ? max_links : SL_WEB_LINKS_DEFAULT_MAX),
                  "%zu reported",
                  sum->reported);
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl_web_links_summary s1;
    struct sl_web_links_summary s2;
    struct sl_buf a;
    struct sl_buf b;
    const char *charset = NULL;
    size_t chunk = 0;
    size_t max_links = 0;
    int rc1 = 0;
    int rc2 = 0;

    if (size < 1) {
        return 0;
    }
    chunk = 1 + (data[0] & 31u);
    max_links = (data[0] & 0x20u) ? 3 : 0;
    charset = charsets[data[0] >> 6];
    rc1 = extract(data + 1, size - 1, 0, 0, charset, max_links, &a, &s1);
    rc2 = extract(data + 1, size - 1, chunk, 1, charset, max_links, &b, &s2);
    SL_FUZZ_CHECK(rc1 == 0 && rc2 == 0,
                  "whole: %s, in chunks of %zu: %s",
                  sl_err_name(rc1),
                  chunk,
                  sl_err_name(rc2));
    SL_FUZZ_CHECK(a.len == b.len &&
                      (a.len == 0 || memcmp(a.data, b.data, a.len) == 0),
                  "whole:\n%s\nin chunks of %zu through a cache:\n%s",
                  a.len > 0 ? a.data : "",
                  chunk,
                  b.len > 0 ? b.data : "");
    SL_FUZZ_CHECK(memcmp(&s1, &s2, sizeof(s1)) == 0,
                  "summaries differ (reported %zu/%zu nofollow %zu/%zu "
                  "refused %zu/%zu invalid %zu/%zu same %zu/%zu "
                  "suppressed %zu/%zu over %zu/%zu meta %d%d/%d%d base "
                  "%d/%d)",
                  s1.reported,
                  s2.reported,
                  s1.nofollow,
                  s2.nofollow,
                  s1.refused,
                  s2.refused,
                  s1.invalid,
                  s2.invalid,
                  s1.same_document,
                  s2.same_document,
                  s1.suppressed,
                  s2.suppressed,
                  s1.over_limit,
                  s2.over_limit,
                  s1.meta_nofollow,
                  s1.meta_noindex,
                  s2.meta_nofollow,
                  s2.meta_noindex,
                  s1.base_used,
                  s2.base_used);
    sl_buf_free(&a);
    sl_buf_free(&b);
    return 0;
}
