/*
 * The URL normal form of web/url.c.  The input is a URL; when it holds a
 * line break, the first line is also taken as a base and the rest as an
 * href resolved against it.  Every normal form that comes out must be
 * one: at most SL_WEB_URL_MAX bytes, http or https, no fragment, no
 * control byte, valid UTF-8, and a fixed point (normalising it again
 * gives it back, which the webCrawler relies on when it hands resolved
 * links to the next task as they are); its host key and path agree.
 */
#include "core/sl.h"
#include "web/web.h"

#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    return 0;
}

static void
check_form(const char *what, const char *in, const char *norm)
{
    size_t n = strlen(norm);
    const char *rest = NULL;
    char *again = NULL;
    char *key = NULL;
    char *pq = NULL;
    size_t i = 0;
    int rc = 0;

    SL_FUZZ_CHECK(n <= SL_WEB_URL_MAX, "%s: %zu bytes", what, n);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)norm[i];

        SL_FUZZ_CHECK(c > 0x20 && c != 0x7f,
                      "%s of '%s': byte 0x%02x at %zu in '%s'",
                      what,
                      in,
                      c,
                      i,
                      norm);
    }
    SL_FUZZ_CHECK(
        sl_utf8_valid(norm, n), "%s of '%s': not UTF-8: '%s'", what, in, norm);
    SL_FUZZ_CHECK(strncmp(norm, "http://", 7) == 0 ||
                      strncmp(norm, "https://", 8) == 0,
                  "%s of '%s': scheme of '%s'",
                  what,
                  in,
                  norm);
    SL_FUZZ_CHECK(strchr(norm, '#') == NULL,
                  "%s of '%s': fragment in '%s'",
                  what,
                  in,
                  norm);
    rc = sl_web_url_normalize(norm, &again);
    SL_FUZZ_CHECK(rc == 0 && strcmp(again, norm) == 0,
                  "%s of '%s': '%s' normalises to %s '%s'",
                  what,
                  in,
                  norm,
                  sl_err_name(rc),
                  again != NULL ? again : "(none)");
    rc = sl_web_url_host_key(norm, &key);
    SL_FUZZ_CHECK(rc == 0, "host key of '%s': %s", norm, sl_err_name(rc));
    SL_FUZZ_CHECK(strncmp(key, norm, strcspn(key, ":") + 3) == 0,
                  "host key '%s' of '%s'",
                  key,
                  norm);
    rc = sl_web_url_path_query(norm, &pq);
    SL_FUZZ_CHECK(
        rc == 0 && pq[0] == '/', "path of '%s': %s", norm, sl_err_name(rc));
    rest = strchr(strstr(norm, "://") + 3, '/');
    SL_FUZZ_CHECK(
        rest != NULL && strcmp(rest, pq) == 0, "path '%s' of '%s'", pq, norm);
    sl_free(pq);
    sl_free(key);
    sl_free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *all = sl_fuzz_str(data, size);
    char *norm = NULL;
    char *key = NULL;
    int rc = sl_web_url_normalize(all, &norm);
    int rc2 = 0;

    SL_FUZZ_CHECK(rc == 0 || rc == SL_EINVAL || rc == SL_EACCES ||
                      rc == SL_ETOOLARGE,
                  "normalise '%s': %s",
                  all,
                  sl_err_name(rc));
    SL_FUZZ_CHECK((rc == 0) == (norm != NULL), "normalise '%s': output", all);
    if (rc == 0) {
        check_form("normal form", all, norm);
    }
    /* the host key takes what normalise takes */
    rc2 = sl_web_url_host_key(all, &key);
    SL_FUZZ_CHECK(rc2 == rc,
                  "host key of '%s': %s, normalise %s",
                  all,
                  sl_err_name(rc2),
                  sl_err_name(rc));
    sl_free(key);
    sl_free(norm);
    norm = NULL;
    if (memchr(data, '\n', size) != NULL) {
        char *base = NULL;
        size_t hlen = 0;
        const uint8_t *h = sl_fuzz_line(data, size, &base, &hlen);
        char *href = sl_fuzz_str(h, hlen);

        rc = sl_web_url_resolve(base, href, &norm);
        SL_FUZZ_CHECK((rc == 0) == (norm != NULL), "resolve: output");
        if (rc == 0) {
            check_form("resolved", href, norm);
        }
        sl_free(norm);
        sl_free(href);
        sl_free(base);
    }
    sl_free(all);
    return 0;
}
