/*
 * robots.txt (web/robots.c) and the X-Robots-Tag header.  The input's
 * first line is a path to ask about (and an X-Robots-Tag value), the rest
 * the robots.txt body, parsed for the product token "SluiceBot".  Checks:
 * the answers are 0 or 1, /robots.txt is always allowed, the crawl delay
 * is -1 or a finite number >= 0, the sitemaps are bounded and there; and a
 * group for another crawler put in front of the body changes nothing for
 * ours.
 */
#include <math.h>

#include "core/sl.h"
#include "web/web.h"

#include "fuzz.h"

#define UA "SluiceBot/0.1 (+https://example.com/bot)"

/* A group of another crawler, with a rule, before the body. */
static const char other[] = "User-agent: OtherBot\nDisallow: /\n\n";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    return 0;
}

static void
check(const struct sl_web_robots *r, const char *path, const char *pq)
{
    double delay = sl_web_robots_crawl_delay(r);
    size_t n = sl_web_robots_sitemap_count(r);
    size_t i = 0;
    int a = 0;

    SL_FUZZ_CHECK(sl_web_robots_allowed(r, "/robots.txt") == 1, "robots.txt");
    SL_FUZZ_CHECK(sl_web_robots_allowed(r, "/robots.txt?x") == 1,
                  "robots.txt?x");
    a = sl_web_robots_allowed(r, path);
    SL_FUZZ_CHECK(a == 0 || a == 1, "allowed '%s': %d", path, a);
    if (pq != NULL) {
        a = sl_web_robots_allowed(r, pq);
        SL_FUZZ_CHECK(a == 0 || a == 1, "allowed '%s': %d", pq, a);
    }
    SL_FUZZ_CHECK(delay == -1 || (isfinite(delay) && delay >= 0),
                  "crawl delay %g",
                  delay);
    SL_FUZZ_CHECK(n <= SL_WEB_ROBOTS_MAX_SITEMAPS, "%zu sitemaps", n);
    for (i = 0; i < n; i++) {
        SL_FUZZ_CHECK(sl_web_robots_sitemap(r, i) != NULL, "sitemap %zu", i);
    }
    SL_FUZZ_CHECK(sl_web_robots_sitemap(r, n) == NULL, "sitemap past end");
}

/* The same answers from @a and @b. */
static void
same(const struct sl_web_robots *a,
     const struct sl_web_robots *b,
     const char *path,
     const char *pq)
{
    double da = sl_web_robots_crawl_delay(a);
    double db = sl_web_robots_crawl_delay(b);
    size_t i = 0;

    SL_FUZZ_CHECK(sl_web_robots_allowed(a, path) ==
                      sl_web_robots_allowed(b, path),
                  "'%s' answered differently after another group",
                  path);
    SL_FUZZ_CHECK(pq == NULL || sl_web_robots_allowed(a, pq) ==
                                    sl_web_robots_allowed(b, pq),
                  "'%s' answered differently after another group",
                  pq);
    SL_FUZZ_CHECK(da == db || (isnan(da) && isnan(db)),
                  "crawl delay %g, %g after another group",
                  da,
                  db);
    SL_FUZZ_CHECK(sl_web_robots_sitemap_count(a) ==
                      sl_web_robots_sitemap_count(b),
                  "sitemaps after another group");
    for (i = 0; i < sl_web_robots_sitemap_count(a); i++) {
        SL_FUZZ_CHECK(strcmp(sl_web_robots_sitemap(a, i),
                             sl_web_robots_sitemap(b, i)) == 0,
                      "sitemap %zu after another group",
                      i);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sl_web_robots *r = NULL;
    struct sl_web_robots *r2 = NULL;
    char *path = NULL;
    char *url = NULL;
    char *pq = NULL;
    size_t len = 0;
    const uint8_t *body = sl_fuzz_line(data, size, &path, &len);
    unsigned tag = 0;
    int rc = 0;

    rc = sl_web_robots_parse((const char *)body, len, UA, &r);
    SL_FUZZ_CHECK(rc == 0 && r != NULL, "parse: %s", sl_err_name(rc));
    url =
        sl_asprintf("http://example.com%s%s", path[0] == '/' ? "" : "/", path);
    if (sl_web_url_path_query(url, &pq) != 0) {
        pq = NULL;
    }
    check(r, path, pq);
    /* the BOM is taken at the start only, and the body must fit */
    if ((len < 3 || memcmp(body, "\xef\xbb\xbf", 3) != 0) &&
        len + sizeof(other) < SL_WEB_ROBOTS_MAX_BYTES) {
        char *text = sl_malloc(sizeof(other) - 1 + len);

        memcpy(text, other, sizeof(other) - 1);
        if (len > 0) {
            memcpy(text + sizeof(other) - 1, body, len);
        }
        rc = sl_web_robots_parse(text, sizeof(other) - 1 + len, UA, &r2);
        SL_FUZZ_CHECK(rc == 0, "parse: %s", sl_err_name(rc));
        same(r, r2, path, pq);
        sl_web_robots_free(r2);
        sl_free(text);
    }
    tag = sl_web_robots_tag(path, UA);
    SL_FUZZ_CHECK(
        (tag & ~(SL_WEB_NOINDEX | SL_WEB_NOFOLLOW)) == 0, "tag %u", tag);
    sl_web_robots_free(r);
    sl_free(pq);
    sl_free(url);
    sl_free(path);
    return 0;
}
