/*
 * Unit tests of web/: the URL normal form and RFC 3986 resolution
 * (table-driven), robots.txt (RFC 9309 examples, matching rules, limits,
 * garbage), HTML link extraction (sources, base, nofollow, meta robots,
 * charsets, broken markup, limits, and the same links for any cutting of
 * the page into chunks: whole, 1 and 7 bytes, and every two-chunk split)
 * and sitemaps (urlset, index, gzip, limits, malformed input).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "web/web.h"

/* ------------------------------------------------------------------------
 * URLs.
 * --------------------------------------------------------------------- */

struct url_case {
    const char *in;   /* input (href for resolve) */
    const char *want; /* normalised result, or NULL */
    int rc;           /* expected result code */
};

static void
check_url(size_t i, const struct url_case *c, int rc, const char *got)
{
    if (rc != c->rc) {
        fail_msg("case %zu (%s): rc %s, want %s (got %s)",
                 i,
                 c->in,
                 sl_err_name(rc),
                 sl_err_name(c->rc),
                 got != NULL ? got : "NULL");
    }
    if (c->want != NULL && (got == NULL || strcmp(got, c->want) != 0)) {
        fail_msg("case %zu (%s): got %s, want %s",
                 i,
                 c->in,
                 got != NULL ? got : "NULL",
                 c->want);
    }
    if (c->rc != 0 && got != NULL) {
        fail_msg("case %zu (%s): output on error", i, c->in);
    }
}

/* A normal form normalises to itself: the webCrawler writes resolved
 * links in it, and the next task takes them as they are (_visited). */
static void
check_normal(const char *url)
{
    char *again = NULL;

    if (url == NULL) {
        return;
    }
    assert_int_equal(sl_web_url_normalize(url, &again), 0);
    assert_string_equal(again, url);
    sl_free(again);
}

static void
test_url_normalize(void **state)
{
    static const struct url_case cases[] = {
        {"HTTP://Example.COM/", "http://example.com/", 0},
        {"http://example.com", "http://example.com/", 0},
        {"http://example.com:80/a", "http://example.com/a", 0},
        {"https://example.com:443/a", "https://example.com/a", 0},
        {"HTTPS://h:0443/x", "https://h/x", 0},
        {"http://example.com:443/", "http://example.com:443/", 0},
        {"https://example.com:80/", "https://example.com:80/", 0},
        {"http://example.com:8080/", "http://example.com:8080/", 0},
        {"http://example.com/a#frag", "http://example.com/a", 0},
        {"http://example.com/a?b#c?d", "http://example.com/a?b", 0},
        {"http://example.com/#x y z", "http://example.com/", 0},
        {"http://example.com/a/./b/../c", "http://example.com/a/c", 0},
        {"http://example.com/a/b/../../../c", "http://example.com/c", 0},
        {"http://example.com/a/..", "http://example.com/", 0},
        {"http://example.com//a//b", "http://example.com//a//b", 0},
        {"http://example.com/%7e%2fx?a=%3c",
         "http://example.com/%7E%2Fx?a=%3C",
         0},
        {"http://example.com/a b?c d", "http://example.com/a%20b?c%20d", 0},
        {"http://example.com/a?x=1+2", "http://example.com/a?x=1+2", 0},
        {"http://example.com/caf\xc3\xa9?q=\xc3\xa9",
         "http://example.com/caf%C3%A9?q=%C3%A9",
         0},
        {"http://example.com/a\"<>{}|\\^`",
         "http://example.com/a%22%3C%3E%7B%7D%7C%5C%5E%60",
         0},
        {"http://example.com/a[1]?b[]=2",
         "http://example.com/a%5B1%5D?b%5B%5D=2",
         0},
        {"http://example.com/a\x7f", NULL, SL_EINVAL},
        {"http://example.com/50%", "http://example.com/50%25", 0},
        {"http://example.com/a%zz", "http://example.com/a%25zz", 0},
        {"http://example.com/?b=2&a=1&a=0",
         "http://example.com/?b=2&a=1&a=0",
         0},
        {"http://example.com/?", "http://example.com/", 0},
        {"http://example.com/a;p=1", "http://example.com/a;p=1", 0},
        {" \t\nhttp://example.com/x \r\n", "http://example.com/x", 0},
        {"http://exa\nmple.com/x\ty\r", "http://example.com/xy", 0},
        {"http://[::1]:80/a", "http://[::1]/a", 0},
        {"http://[::1]:8080/a", "http://[::1]:8080/a", 0},
        {"http://[fe80::1%25eth0]/a", "http://[fe80::1%25eth0]/a", 0},
        {"http://[::3%25BCch\xec\xec"
         "1]:8080/a",
         NULL,
         SL_EINVAL},
        {"http://[::3%25a%2fb]/", NULL, SL_EINVAL},
        {"http://EXAMPLE.com./", "http://example.com./", 0},
        {"http://B\xc3\xbc"
         "CHER.de/",
         "http://b\xc3\xbc"
         "cher.de/",
         0},
        {"http://user:pw@example.com/", NULL, SL_EINVAL},
        {"http://user@example.com/", NULL, SL_EINVAL},
        {"http://@example.com/", NULL, SL_EINVAL},
        {"http://", NULL, SL_EINVAL},
        {"http:h/x", NULL, SL_EINVAL},
        {"example.com/x", NULL, SL_EINVAL},
        {"//example.com/x", NULL, SL_EINVAL},
        {"/just/a/path", NULL, SL_EINVAL},
        {"", NULL, SL_EINVAL},
        {"   ", NULL, SL_EINVAL},
        {"http://example.com:99999/", NULL, SL_EINVAL},
        {"http://example.com:8x/", NULL, SL_EINVAL},
        {"http://exa mple.com/", NULL, SL_EINVAL},
        {"http://example.com/a\x01"
         "b",
         NULL,
         SL_EINVAL},
        {"http://example.com/a\x01", "http://example.com/a", 0},
        {"ftp://example.com/", NULL, SL_EACCES},
        {"FILE:///etc/passwd", NULL, SL_EACCES},
        {"file:///etc/passwd", NULL, SL_EACCES},
        {"javascript:alert(1)", NULL, SL_EACCES},
        {" JavaScript:void(0)", NULL, SL_EACCES},
        {"mailto:a@example.com", NULL, SL_EACCES},
        {"data:text/html,<a href=x>", NULL, SL_EACCES},
        {"tel:+123", NULL, SL_EACCES},
        {"httpx://example.com/", NULL, SL_EACCES},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        int rc = sl_web_url_normalize(cases[i].in, &out);

        check_url(i, &cases[i], rc, out);
        check_normal(out);
        sl_free(out);
    }
}

/*
 * libcurl decodes percent-encodings in the host; a host that is then not
 * valid UTF-8 or holds a control character is refused, and one that is an
 * IPv4 address is written as a dotted quad, so that every normal form is
 * one (fuzz_url found "http://a%7fb.com/x" normalised to a
 * host with a DEL byte, which normalising again refused).
 */
static void
test_url_host_decoded(void **state)
{
    static const struct url_case cases[] = {
        {"http://a%7fb.com/x", NULL, SL_EINVAL},
        {"http://a%7Fb.com/x", NULL, SL_EINVAL},
        {"http://a%01b.com/", NULL, SL_EINVAL},
        {"http://a%1fb.com/", NULL, SL_EINVAL},
        {"http://%ffx.com/", NULL, SL_EINVAL},
        {"http://\xffx.com/", NULL, SL_EINVAL},
        {"http://a%c3b.com/", NULL, SL_EINVAL},
        {"http://a%c2%80b.com/", NULL, SL_EINVAL},
        {"http://a%c2%9fb.com/", NULL, SL_EINVAL},
        {"http://a\xc2\x85"
         "b.com/",
         NULL,
         SL_EINVAL},
        {"http://a\x7f.com/", NULL, SL_EINVAL},
        {"http://a%41b.com/x", "http://aab.com/x", 0},
        {"http://%c3%a9x.com/", "http://\xc3\xa9x.com/", 0},
        {"http://a%c2%a0b.com/",
         "http://a\xc2\xa0"
         "b.com/",
         0},
        {"http://a%25b.com/", "http://a%25b.com/", 0},
        /* an IPv4 address in another form is a dotted quad, also when
         * percent-encoded (fuzz_url: "https://%3615/" gave
         * "https://615/", which normalises to "https://0.0.2.103/") */
        {"https://%3615/a", "https://0.0.2.103/a", 0},
        {"http://%30x7f.1/", "http://127.0.0.1/", 0},
        {"http://%31.%32.3.4/", "http://1.2.3.4/", 0},
        {"http://0x7f.1/", "http://127.0.0.1/", 0},
        {"http://deadbeef.example/", "http://deadbeef.example/", 0},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        int rc = sl_web_url_normalize(cases[i].in, &out);

        check_url(i, &cases[i], rc, out);
        check_normal(out);
        sl_free(out);
        /* the same host met while resolving a link */
        rc = sl_web_url_resolve("http://example.com/", cases[i].in, &out);
        check_url(i, &cases[i], rc, out);
        sl_free(out);
    }
}

static void
test_url_length_limit(void **state)
{
    char *url = sl_malloc(SL_WEB_URL_MAX + 64);
    char *out = NULL;
    size_t n = 0;

    (void)state;
    n = (size_t)snprintf(url, 64, "http://example.com/");
    memset(url + n, 'a', SL_WEB_URL_MAX - n);
    url[SL_WEB_URL_MAX] = '\0';
    assert_int_equal(sl_web_url_normalize(url, &out), 0);
    assert_int_equal(strlen(out), SL_WEB_URL_MAX);
    SL_FREE(out);
    /* One byte more in, or an encoding that grows past the limit. */
    url[SL_WEB_URL_MAX] = 'a';
    url[SL_WEB_URL_MAX + 1] = '\0';
    assert_int_equal(sl_web_url_normalize(url, &out), SL_ETOOLARGE);
    assert_null(out);
    url[SL_WEB_URL_MAX] = '\0';
    url[100] = ' ';
    url[101] = '\n'; /* removed, as is the tab */
    url[102] = '\t';
    assert_int_equal(sl_web_url_normalize(url, &out), 0);
    assert_int_equal(strlen(out), SL_WEB_URL_MAX);
    SL_FREE(out);
    url[101] = ' ';
    assert_int_equal(sl_web_url_normalize(url, &out), SL_ETOOLARGE);
    assert_null(out);
    sl_free(url);
}

/* RFC 3986 5.4.1 and 5.4.2, in the normal form (no fragment, "/" path). */
static void
test_url_resolve_rfc3986(void **state)
{
    static const struct url_case cases[] = {
        {"g:h", NULL, SL_EACCES},
        {"g", "http://a/b/c/g", 0},
        {"./g", "http://a/b/c/g", 0},
        {"g/", "http://a/b/c/g/", 0},
        {"/g", "http://a/g", 0},
        {"//g", "http://g/", 0},
        {"?y", "http://a/b/c/d;p?y", 0},
        {"g?y", "http://a/b/c/g?y", 0},
        {"#s", "http://a/b/c/d;p?q", 0},
        {"g#s", "http://a/b/c/g", 0},
        {"g?y#s", "http://a/b/c/g?y", 0},
        {";x", "http://a/b/c/;x", 0},
        {"g;x", "http://a/b/c/g;x", 0},
        {"g;x?y#s", "http://a/b/c/g;x?y", 0},
        {"", "http://a/b/c/d;p?q", 0},
        {".", "http://a/b/c/", 0},
        {"./", "http://a/b/c/", 0},
        {"..", "http://a/b/", 0},
        {"../", "http://a/b/", 0},
        {"../g", "http://a/b/g", 0},
        {"../..", "http://a/", 0},
        {"../../", "http://a/", 0},
        {"../../g", "http://a/g", 0},
        {"../../../g", "http://a/g", 0},
        {"../../../../g", "http://a/g", 0},
        {"/./g", "http://a/g", 0},
        {"/../g", "http://a/g", 0},
        {"g.", "http://a/b/c/g.", 0},
        {".g", "http://a/b/c/.g", 0},
        {"g..", "http://a/b/c/g..", 0},
        {"..g", "http://a/b/c/..g", 0},
        {"./../g", "http://a/b/g", 0},
        {"./g/.", "http://a/b/c/g/", 0},
        {"g/./h", "http://a/b/c/g/h", 0},
        {"g/../h", "http://a/b/c/h", 0},
        {"g;x=1/./y", "http://a/b/c/g;x=1/y", 0},
        {"g;x=1/../y", "http://a/b/c/y", 0},
        {"g?y/./x", "http://a/b/c/g?y/./x", 0},
        {"g?y/../x", "http://a/b/c/g?y/../x", 0},
        {"g#s/./x", "http://a/b/c/g", 0},
        {"g#s/../x", "http://a/b/c/g", 0},
        {"http:g", NULL, SL_EINVAL},
        /* Not from the RFC. */
        {"  ../x  ", "http://a/b/x", 0},
        {"\n\t?q=1\n", "http://a/b/c/d;p?q=1", 0},
        {"a b", "http://a/b/c/a%20b", 0},
        {"?a b=\xc3\xa9", "http://a/b/c/d;p?a%20b=%C3%A9", 0},
        {"//Other.EXAMPLE:80/p", "http://other.example/p", 0},
        {"HTTPS://Other.example:443", "https://other.example/", 0},
        {"javascript:void(0)", NULL, SL_EACCES},
        {"mailto:x@example.com", NULL, SL_EACCES},
        {"ftp://example.com/", NULL, SL_EACCES},
        {"//u:p@example.com/", NULL, SL_EINVAL},
        {"\\x", "http://a/b/c/%5Cx", 0},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        int rc = sl_web_url_resolve("http://a/b/c/d;p?q", cases[i].in, &out);

        check_url(i, &cases[i], rc, out);
        check_normal(out);
        sl_free(out);
    }
}

static void
test_url_resolve_base(void **state)
{
    char *out = NULL;

    (void)state;
    /* The base is normalised first: its fragment is not kept. */
    assert_int_equal(sl_web_url_resolve("HTTP://A/b#x", "", &out), 0);
    assert_string_equal(out, "http://a/b");
    SL_FREE(out);
    assert_int_equal(sl_web_url_resolve("http://a/b/", "c", &out), 0);
    assert_string_equal(out, "http://a/b/c");
    SL_FREE(out);
    assert_int_equal(sl_web_url_resolve("ftp://a/", "b", &out), SL_EINVAL);
    assert_null(out);
    assert_int_equal(sl_web_url_resolve("/relative", "b", &out), SL_EINVAL);
    assert_int_equal(sl_web_url_resolve("http://a/", "http://b/x", &out), 0);
    assert_string_equal(out, "http://b/x");
    sl_free(out);
}

static void
test_url_host_key(void **state)
{
    static const struct url_case keys[] = {
        {"http://Example.com/x?y", "http://example.com:80", 0},
        {"https://example.com/", "https://example.com:443", 0},
        {"https://a.example:8443/z", "https://a.example:8443", 0},
        {"http://a.example:443/", "http://a.example:443", 0},
        {"http://[::1]/", "http://[::1]:80", 0},
        {"ftp://example.com/", NULL, SL_EACCES},
        {"nonsense", NULL, SL_EINVAL},
    };
    static const struct url_case paths[] = {
        {"http://a/b%7e?x=1#f", "/b%7E?x=1", 0},
        {"http://a", "/", 0},
        {"https://a:1/x/../y z?", "/y%20z", 0},
        {"mailto:x@y", NULL, SL_EACCES},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char *out = NULL;
        int rc = sl_web_url_host_key(keys[i].in, &out);

        check_url(i, &keys[i], rc, out);
        sl_free(out);
    }
    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char *out = NULL;
        int rc = sl_web_url_path_query(paths[i].in, &out);

        check_url(i, &paths[i], rc, out);
        sl_free(out);
    }
}

/* ------------------------------------------------------------------------
 * robots.txt.
 * --------------------------------------------------------------------- */

struct path_case {
    const char *path;
    int allowed;
};

static struct sl_web_robots *
robots(const char *text, const char *ua)
{
    struct sl_web_robots *r = NULL;

    assert_int_equal(sl_web_robots_parse(text, strlen(text), ua, &r), 0);
    assert_non_null(r);
    return r;
}

static void
check_paths(const struct sl_web_robots *r,
            const char *what,
            const struct path_case *cases,
            size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        int got = sl_web_robots_allowed(r, cases[i].path);

        if (got != cases[i].allowed) {
            fail_msg("%s: %s is %s, want %s",
                     what,
                     cases[i].path,
                     got ? "allowed" : "disallowed",
                     cases[i].allowed ? "allowed" : "disallowed");
        }
    }
}

#define CHECK_PATHS(r, what, cases)                                            \
    check_paths((r), (what), (cases), sizeof(cases) / sizeof((cases)[0]))

/* RFC 9309 5.1. */
static const char rfc_example[] = "User-Agent: *\n"
                                  "Disallow: *.gif$\n"
                                  "Disallow: /example/\n"
                                  "Allow: /publications/\n"
                                  "\n"
                                  "User-Agent: foobot\n"
                                  "Disallow:/\n"
                                  "Allow:/example/page.html\n"
                                  "Allow:/example/allowed.gif\n"
                                  "\n"
                                  "User-Agent: barbot\n"
                                  "User-Agent: bazbot\n"
                                  "Disallow: /example/page.html\n"
                                  "\n"
                                  "User-Agent: quxbot\n"
                                  "\n"
                                  "EOF\n";

static void
test_robots_rfc_example(void **state)
{
    static const struct path_case star[] = {
        {"/", 1},
        {"/index.html", 1},
        {"/x.gif", 0},
        {"/a/b/x.gif", 0},
        {"/x.gif?size=2", 1},
        {"/example/", 0},
        {"/example/page.html", 0},
        {"/example", 1},
        {"/publications/", 1},
        {"/publications/x.gif", 1}, /* the longer rule allows */
    };
    static const struct path_case foobot[] = {
        {"/", 0},
        {"/example/page.html", 1},
        {"/example/allowed.gif", 1},
        {"/example/other.gif", 0},
        {"/publications/", 0},
    };
    static const struct path_case barbot[] = {
        {"/", 1},
        {"/example/page.html", 0},
        {"/example/other.html", 1},
        {"/x.gif", 1},
    };
    static const struct path_case quxbot[] = {
        {"/", 1},
        {"/example/page.html", 1},
        {"/x.gif", 1},
    };
    struct sl_web_robots *r = NULL;

    (void)state;
    r = robots(rfc_example, "otherbot/1.0");
    CHECK_PATHS(r, "*", star);
    sl_web_robots_free(r);
    r = robots(rfc_example, "FooBot/2.1 (+https://foo.example/bot)");
    CHECK_PATHS(r, "foobot", foobot);
    sl_web_robots_free(r);
    r = robots(rfc_example, "barbot");
    CHECK_PATHS(r, "barbot", barbot);
    sl_web_robots_free(r);
    r = robots(rfc_example, "BAZBOT/1");
    CHECK_PATHS(r, "bazbot", barbot);
    sl_web_robots_free(r);
    r = robots(rfc_example, "quxbot");
    CHECK_PATHS(r, "quxbot", quxbot);
    sl_web_robots_free(r);
}

static void
test_robots_longest_match(void **state)
{
    static const struct path_case rfc52[] = {
        {"/example/page/", 1},
        {"/example/page/x.html", 1},
        {"/example/page/disallowed.gif", 0},
        {"/example/page/disallowed.gif2", 0},
        {"/other", 1},
    };
    static const struct path_case tie[] = {
        {"/folder", 1},
        {"/folder/x", 1},
        {"/page", 1},
    };
    static const struct path_case google[] = {
        {"/p", 1},
        {"/page", 1},
        {"/page.html", 0},
        {"/", 1},
        {"/x.htm", 0},
    };
    struct sl_web_robots *r = NULL;

    (void)state;
    r = robots("User-Agent: foobot\n"
               "Allow: /example/page/\n"
               "Disallow: /example/page/disallowed.gif\n",
               "foobot");
    CHECK_PATHS(r, "rfc 5.2", rfc52);
    sl_web_robots_free(r);
    /* Equal length: Allow wins, whatever the order. */
    r = robots("user-agent: *\n"
               "disallow: /folder\n"
               "allow: /folder\n"
               "allow: /page\n"
               "disallow: /page\n",
               "bot");
    CHECK_PATHS(r, "tie", tie);
    sl_web_robots_free(r);
    r = robots("user-agent: *\n"
               "allow: /p\n"
               "allow: /page\n"
               "disallow: /*.html\n"
               "allow: /$\n"
               "disallow: /*.htm\n",
               "bot");
    CHECK_PATHS(r, "google", google);
    sl_web_robots_free(r);
}

static void
test_robots_wildcards(void **state)
{
    static const struct path_case cases[] = {
        {"/index.php", 0},
        {"/index.php?x=1", 1},
        {"/a/b.php", 0},
        {"/filename.php/", 1},
        {"/fish", 0},
        {"/fish.html", 0},
        {"/fishheads/yummy.html", 0},
        {"/Fish.asp", 1},
        {"/catfish", 1},
        {"/a/private/x", 0},
        {"/private/x", 1},
        {"/q?id=1&sid=2", 0},
        {"/q?id=1", 1},
        {"/exact", 0},
        {"/exact/", 1},
        {"/x*y", 1},
        {"/lit*y", 0},
    };
    struct sl_web_robots *r = NULL;

    (void)state;
    r = robots("user-agent: *\n"
               "disallow: /*.php$\n"
               "disallow: /fish*\n"
               "disallow: /*/private/\n"
               "disallow: /*?*sid=\n"
               "disallow: /exact$\n"
               "disallow: /lit**y\n",
               "bot");
    CHECK_PATHS(r, "wildcards", cases);
    sl_web_robots_free(r);
}

static void
test_robots_percent_encoding(void **state)
{
    static const struct path_case cases[] = {
        {"/foo/bar/baz", 0},
        {"/foo/bar/%62%61%7A", 0},
        {"/foo/bar/%E3%83%84", 0},
        {"/foo/bar/%e3%83%84", 0},
        {"/foo/bar/\xe3\x83\x84", 0},
        {"/foo/bar/x", 1},
        {"/a%2Fb", 0},
        {"/a/b", 1},
        {"/~user/", 0},
        {"/%7Euser/x", 0},
        {"/space%20here", 0},
    };
    struct sl_web_robots *r = NULL;

    (void)state;
    r = robots("user-agent: *\n"
               "disallow: /foo/bar/%62%61%7A\n"
               "disallow: /foo/bar/\xe3\x83\x84\n"
               "disallow: /a%2fb\n"
               "disallow: /%7euser/\n"
               "disallow: /space here\n",
               "bot");
    CHECK_PATHS(r, "percent", cases);
    sl_web_robots_free(r);
}

static void
test_robots_groups(void **state)
{
    static const struct path_case merged[] = {
        {"/foo", 0},
        {"/bar", 0},
        {"/baz", 0},
        {"/qux", 1},
    };
    static const struct path_case specific[] = {
        {"/public", 1},
        {"/private", 0},
        {"/other-group", 1},
    };
    static const struct path_case star_only[] = {
        {"/public", 0},
        {"/private", 0},
    };
    struct sl_web_robots *r = NULL;
    const char *text = NULL;

    (void)state;
    /* RFC 9309 2.2.1: groups for the same agent are merged. */
    text = "user-agent: ExampleBot\n"
           "disallow: /foo\n"
           "disallow: /bar\n"
           "\n"
           "user-agent: otherbot\n"
           "disallow: /qux\n"
           "\n"
           "user-agent: examplebot/3.0\n"
           "disallow: /baz\n";
    r = robots(text, "ExampleBot/1.1");
    CHECK_PATHS(r, "merged", merged);
    sl_web_robots_free(r);
    /* A specific group replaces "*"; a user-agent line after rules starts
     * a new group; rules before any user-agent line do not count;
     * consecutive user-agent lines (blank lines between) share a group. */
    text = "disallow: /public\n"
           "user-agent: *\n"
           "disallow: /\n"
           "user-agent: nobody\n"
           "\n"
           "user-agent: examplebot\n"
           "disallow: /private\n"
           "user-agent: other\n"
           "disallow: /other-group\n";
    r = robots(text, "examplebot");
    CHECK_PATHS(r, "specific", specific);
    sl_web_robots_free(r);
    r = robots(text, "Example");
    CHECK_PATHS(r, "star", star_only);
    sl_web_robots_free(r);
    r = robots(text, "examplebots");
    CHECK_PATHS(r, "star", star_only);
    sl_web_robots_free(r);
    /* No group for us and no "*": everything allowed. */
    r = robots("user-agent: other\ndisallow: /\n", "examplebot");
    assert_true(sl_web_robots_allowed(r, "/x"));
    sl_web_robots_free(r);
    /* An empty Disallow allows. */
    r = robots("user-agent: *\ndisallow:\n", "examplebot");
    assert_true(sl_web_robots_allowed(r, "/x"));
    sl_web_robots_free(r);
    assert_int_equal(sl_web_robots_parse("", 0, "/1.0", &r), SL_EINVAL);
    assert_null(r);
    assert_int_equal(sl_web_robots_parse("", 0, "", &r), SL_EINVAL);
    assert_int_equal(sl_web_robots_parse("", 0, NULL, &r), SL_EINVAL);
}

static void
test_robots_delay_sitemaps(void **state)
{
    struct sl_web_robots *r = NULL;
    const char *text = "Sitemap: https://a.example/s1.xml\n"
                       "user-agent: *\n"
                       "crawl-delay: 5\n"
                       "sitemap: /s2.xml.gz # relative\n"
                       "disallow: /x\n"
                       "user-agent: mybot\n"
                       "Crawl-Delay: 0.5\n"
                       "crawl-delay: 9\n"
                       "user-agent: badbot\n"
                       "crawl-delay: soon\n"
                       "SITEMAP:   \n"
                       "sitemap:http://b.example/s3.xml\n";

    (void)state;
    r = robots(text, "mybot");
    assert_true(sl_web_robots_crawl_delay(r) == 0.5);
    assert_int_equal(sl_web_robots_sitemap_count(r), 3);
    assert_string_equal(sl_web_robots_sitemap(r, 0),
                        "https://a.example/s1.xml");
    assert_string_equal(sl_web_robots_sitemap(r, 1), "/s2.xml.gz");
    assert_string_equal(sl_web_robots_sitemap(r, 2), "http://b.example/s3.xml");
    assert_null(sl_web_robots_sitemap(r, 3));
    assert_true(sl_web_robots_allowed(r, "/x"));
    sl_web_robots_free(r);
    r = robots(text, "otherbot");
    assert_true(sl_web_robots_crawl_delay(r) == 5.0);
    assert_false(sl_web_robots_allowed(r, "/x"));
    sl_web_robots_free(r);
    r = robots(text, "badbot");
    assert_true(sl_web_robots_crawl_delay(r) == -1.0);
    sl_web_robots_free(r);
    r = robots("user-agent: *\ndisallow: /\n", "bot");
    assert_true(sl_web_robots_crawl_delay(r) == -1.0);
    assert_int_equal(sl_web_robots_sitemap_count(r), 0);
    sl_web_robots_free(r);
}

static void
test_robots_special(void **state)
{
    struct sl_web_robots *r = NULL;

    (void)state;
    r = robots("user-agent: *\ndisallow: /\n", "bot");
    assert_true(sl_web_robots_allowed(r, "/robots.txt"));
    assert_false(sl_web_robots_allowed(r, "/robots.txt2"));
    assert_false(sl_web_robots_allowed(r, "/"));
    assert_false(sl_web_robots_allowed(r, ""));
    assert_false(sl_web_robots_allowed(r, NULL));
    sl_web_robots_free(r);
    r = sl_web_robots_new_disallow_all();
    assert_true(sl_web_robots_allowed(r, "/robots.txt"));
    assert_false(sl_web_robots_allowed(r, "/"));
    assert_false(sl_web_robots_allowed(r, "/a?b"));
    assert_true(sl_web_robots_crawl_delay(r) == -1.0);
    assert_int_equal(sl_web_robots_sitemap_count(r), 0);
    sl_web_robots_free(r);
    r = sl_web_robots_new_allow_all();
    assert_true(sl_web_robots_allowed(r, "/"));
    assert_true(sl_web_robots_allowed(r, "/private/x"));
    sl_web_robots_free(r);
    sl_web_robots_free(NULL);
    /* Nothing at all: everything allowed (and no offset is added to the
     * NULL text, which clang's UBSan saw in web/robots.c). */
    assert_int_equal(sl_web_robots_parse(NULL, 0, "bot", &r), 0);
    assert_true(sl_web_robots_allowed(r, "/x"));
    sl_web_robots_free(r);
}

/* X-Robots-Tag values for the crawler "SluiceBot/0.1 (+x)". */
static void
test_robots_tag(void **state)
{
    static const struct {
        const char *value;
        unsigned want;
    } cases[] = {
        {"noindex", SL_WEB_NOINDEX},
        {"NoFollow", SL_WEB_NOFOLLOW},
        {"none", SL_WEB_NOINDEX | SL_WEB_NOFOLLOW},
        {" noindex , nofollow ", SL_WEB_NOINDEX | SL_WEB_NOFOLLOW},
        {"all", 0},
        {"index, follow", 0},
        {"", 0},
        {"noindexing", 0},
        {"noarchive, nosnippet", 0},
        {"unavailable_after: 25 Jun 2010 15:00:00 PST", 0},
        {"max-snippet: 20, noindex", SL_WEB_NOINDEX},
        /* for other crawlers only */
        {"googlebot: noindex", 0},
        {"otherbot: noindex, nofollow", 0},
        /* for us, by product token, without case */
        {"sluicebot: noindex", SL_WEB_NOINDEX},
        {"SluiceBot/2.0: nofollow", SL_WEB_NOFOLLOW},
        /* a prefix rules the items after it, up to the next prefix */
        {"nofollow, googlebot: noindex", SL_WEB_NOFOLLOW},
        {"googlebot: noindex, SluiceBot: none",
         SL_WEB_NOINDEX | SL_WEB_NOFOLLOW},
        {"SluiceBot: nofollow, googlebot: noindex", SL_WEB_NOFOLLOW},
        {"googlebot: noindex, nofollow", 0},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned got = sl_web_robots_tag(cases[i].value, "SluiceBot/0.1 (+x)");

        if (got != cases[i].want) {
            fail_msg("X-Robots-Tag '%s': %u, want %u",
                     cases[i].value,
                     got,
                     cases[i].want);
        }
    }
    assert_int_equal(sl_web_robots_tag(NULL, "SluiceBot"), 0);
    assert_int_equal(sl_web_robots_tag("noindex", NULL), SL_WEB_NOINDEX);
    assert_int_equal(sl_web_robots_tag("x: noindex", NULL), 0);
}

static void
test_robots_tolerant(void **state)
{
    static const struct path_case cases[] = {
        {"/a", 0},
        {"/a/b", 1},
        {"/nocolon", 1},
        {"/c", 0},
        {"/d", 0},
        {"/e", 0},
        {"/f", 0},
        {"/g", 1},
    };
    static const char text[] = "\xef\xbb\xbfUser-Agent: *\r\n"
                               "Disallow: /a # comment\r\n"
                               "\r\n"
                               "# Disallow: /g\r\n"
                               "random garbage line\r\n"
                               "foo: bar\r\n"
                               ": \r\n"
                               "Disallow /nocolon\r\n"
                               "   Allow   :   /a/b   \r\n"
                               "disallow:/c\r"
                               "DISALLOW: /d\n"
                               "disallow: /e\0"
                               "disallow: /f";
    struct sl_web_robots *r = NULL;

    (void)state;
    /* A NUL ends a line like CR and LF. */
    assert_int_equal(sl_web_robots_parse(text, sizeof(text) - 1, "bot", &r), 0);
    CHECK_PATHS(r, "tolerant", cases);
    sl_web_robots_free(r);
}

static void
test_robots_garbage(void **state)
{
    static const char html[] = "<!DOCTYPE html><html><head><title>Not "
                               "Found</title></head><body><h1>404: "
                               "Disallow: everything</h1></body></html>";
    struct sl_web_robots *r = NULL;
    char *junk = sl_malloc(256 * 1024);
    uint32_t x = 12345;
    size_t i = 0;

    (void)state;
    for (i = 0; i < 256 * 1024; i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (char)(x >> 16);
    }
    assert_int_equal(sl_web_robots_parse(junk, 256 * 1024, "bot", &r), 0);
    (void)sl_web_robots_allowed(r, "/x");
    sl_web_robots_free(r);
    r = robots(html, "bot");
    assert_true(sl_web_robots_allowed(r, "/"));
    assert_true(sl_web_robots_allowed(r, "/everything"));
    sl_web_robots_free(r);
    sl_free(junk);
}

/* Rules that would need pattern length times path length steps each:
 * answered at once, and disallowed (without the bound: allowed, after
 * seconds). */
static void
test_robots_pathological(void **state)
{
    struct sl_buf text;
    char *path = sl_malloc(SL_WEB_URL_MAX + 1);
    struct sl_web_robots *r = NULL;
    size_t i = 0;

    (void)state;
    sl_buf_init(&text, SL_WEB_ROBOTS_MAX_BYTES);
    assert_int_equal(sl_buf_appendf(&text, "user-agent: *\n"), 0);
    for (i = 0; i < 50; i++) {
        assert_int_equal(sl_buf_appendf(&text, "disallow: /*"), 0);
        memset(path, 'a', 8000);
        path[8000] = '\0';
        assert_int_equal(sl_buf_appendf(&text, "%s%zu\n", path, i), 0);
    }
    assert_int_equal(sl_web_robots_parse(text.data, text.len, "bot", &r), 0);
    path[0] = '/';
    memset(path + 1, 'a', SL_WEB_URL_MAX - 1);
    path[SL_WEB_URL_MAX] = '\0';
    assert_false(sl_web_robots_allowed(r, path));
    assert_true(sl_web_robots_allowed(r, "/b"));
    sl_web_robots_free(r);
    sl_buf_free(&text);
    sl_free(path);
}

/* Only the first 500 KiB count; the line cut there is dropped. */
static void
test_robots_size_limit(void **state)
{
    static const char head[] = "user-agent: *\ndisallow: /\n";
    static const char cut[] = "allow: /public-very-long-path\n";
    size_t size = SL_WEB_ROBOTS_MAX_BYTES + 4096;
    char *text = sl_malloc(size + 1);
    size_t at = SL_WEB_ROBOTS_MAX_BYTES - 10; /* where `cut` starts */
    size_t n = 0;
    struct sl_web_robots *r = NULL;

    (void)state;
    memset(text, '#', size);
    memcpy(text, head, sizeof(head) - 1);
    text[sizeof(head) - 1 + 100] = '\n';
    for (n = sizeof(head) + 200; n + 100 < at; n += 100) {
        text[n] = '\n';
    }
    text[at - 1] = '\n';
    memcpy(text + at, cut, sizeof(cut) - 1);
    n = at + sizeof(cut) - 1;
    memcpy(text + n, "allow: /after\n", 14);
    text[size - 1] = '\n';
    text[size] = '\0';
    assert_int_equal(sl_web_robots_parse(text, size, "bot", &r), 0);
    assert_false(sl_web_robots_allowed(r, "/public-very-long-path"));
    assert_false(sl_web_robots_allowed(r, "/pub"));
    assert_false(sl_web_robots_allowed(r, "/after"));
    sl_web_robots_free(r);
    /* The same line wholly inside the limit counts. */
    text[at - 101] = '\n';
    memmove(text + at - 100, text + at, sizeof(cut) - 1);
    memset(text + at - 100 + sizeof(cut) - 1, '\n', 100);
    assert_int_equal(sl_web_robots_parse(text, size, "bot", &r), 0);
    assert_true(sl_web_robots_allowed(r, "/public-very-long-path"));
    assert_false(sl_web_robots_allowed(r, "/after"));
    sl_web_robots_free(r);
    sl_free(text);
}

/* ------------------------------------------------------------------------
 * HTML links.
 * --------------------------------------------------------------------- */

struct collect {
    struct sl_buf out; /* "kind url\n" per link */
    size_t count;
    size_t fail_at; /* the callback fails on this link (1-based), or 0 */
};

static int
on_link(void *ctx, const char *url, enum sl_web_link_kind kind)
{
    struct collect *c = ctx;

    c->count++;
    if (c->fail_at != 0 && c->count == c->fail_at) {
        return SL_ECANCELED;
    }
    return sl_buf_appendf(&c->out, "%s %s\n", sl_web_link_kind_name(kind), url);
}

struct links_run {
    char *out; /* new string: the links */
    struct sl_web_links_summary sum;
    int rc;
};

/* Extract the links of @page (@len bytes) fed in pieces cut at @cuts (a
 * sorted list of @ncuts offsets) or, when @step > 0, every @step bytes. */
static struct links_run
links_cut(const char *url,
          const char *charset,
          size_t max,
          const char *page,
          size_t len,
          size_t step,
          const size_t *cuts,
          size_t ncuts)
{
    struct links_run run;
    struct collect c;
    struct sl_web_links *lx = NULL;
    size_t at = 0;
    size_t i = 0;

    memset(&run, 0, sizeof(run));
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 1u << 24);
    assert_int_equal(sl_web_links_begin(url, charset, max, on_link, &c, &lx),
                     0);
    while (at < len) {
        size_t next = len;

        if (step > 0) {
            next = at + step < len ? at + step : len;
        } else if (i < ncuts) {
            next = cuts[i++];
        }
        assert_int_equal(sl_web_links_feed(lx, page + at, next - at), 0);
        at = next;
    }
    run.rc = sl_web_links_end(lx, &run.sum);
    run.out = sl_strdup(c.out.data != NULL ? c.out.data : "");
    assert_int_equal(c.count, run.sum.reported);
    sl_buf_free(&c.out);
    return run;
}

static struct links_run
links(const char *url, const char *charset, const char *page)
{
    return links_cut(url, charset, 0, page, strlen(page), 0, NULL, 0);
}

/* As links(), through @cache. */
static struct links_run
links_cached(const char *url, const char *page, struct sl_web_url_cache *cache)
{
    struct links_run run;
    struct collect c;
    struct sl_web_links *lx = NULL;

    memset(&run, 0, sizeof(run));
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 1u << 24);
    assert_int_equal(sl_web_links_begin(url, NULL, 0, on_link, &c, &lx), 0);
    sl_web_links_use_cache(lx, cache);
    assert_int_equal(sl_web_links_feed(lx, page, strlen(page)), 0);
    run.rc = sl_web_links_end(lx, &run.sum);
    run.out = sl_strdup(c.out.data != NULL ? c.out.data : "");
    sl_buf_free(&c.out);
    return run;
}

/*
 * A head without links: nothing waits for its end, so the list of
 * waiting links is empty when the head ends (clang's UBSan saw an offset
 * added to its NULL data there, web/links.c flush).
 */
static void
test_links_empty_head(void **state)
{
    struct links_run run;

    (void)state;
    run = links("http://example.com/d/p.html",
                NULL,
                "<html><head><title>t</title></head>"
                "<body><a href=\"x\">x</a></body></html>");
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out, "a http://example.com/d/x\n");
    assert_int_equal(run.sum.reported, 1);
    sl_free(run.out);
    run = links("http://example.com/", NULL, "<p>no head, no links</p>");
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out, "");
    sl_free(run.out);
}

/*
 * The charset of the HTTP header wins over the page's <meta> for the whole
 * page, however it is cut: libxml2 switched to a <meta> charset in
 * mid-page, from wherever it had converted the input, so the links
 * depended on the chunks (fuzz_links: a canonical link of an ISO-8859-1
 * page with <meta charset="utf/8"> was reported whole, not in 1-byte
 * chunks).
 */
static void
test_links_meta_against_header(void **state)
{
    static const char page[] =
        "<html><head><title>T</title><meta charset=\"utf/8\">"
        "<link rel=\"canonical\" href=\"/caf\xe9\"></head><body>"
        "<meta http-equiv=\"Content-Type\" content=\"text/html; "
        "charset=shift_jis\"><a href=\"\xe9t\xbc\">x</a></body></html>";
    static const char want[] = "canonical http://example.com/caf%C3%A9\n"
                               "a http://example.com/d/%C3%A9t%C2%BC\n";
    static const size_t steps[] = {0, 1, 2, 7};
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct links_run run = links_cut("http://example.com/d/p.html",
                                         "iso-8859-1",
                                         0,
                                         page,
                                         sizeof(page) - 1,
                                         steps[i],
                                         NULL,
                                         0);

        assert_int_equal(run.rc, 0);
        if (strcmp(run.out, want) != 0) {
            fail_msg("in steps of %zu:\n%s", steps[i], run.out);
        }
        sl_free(run.out);
    }
}

/*
 * The resolution cache: pages in one directory, another directory, with a
 * query, with <base>, and hrefs that depend on the base's last segment or
 * query ("", "?q", "#f", leading whitespace), dot segments, other hosts,
 * refused schemes and invalid URLs give the same links with a cache shared
 * by all pages (twice over) as without one; the repeated ones are answered
 * from the cache; a full cache starts over.
 */
static void
test_links_cache(void **state)
{
    static const char body[] =
        "<html><head>%s</head><body>"
        "<a href=\"/\">h</a><a href=\"next.html\">n</a>"
        "<a href=\"../up/x.html?a=1#f\">u</a><a href=\"./\">d</a>"
        "<a href=\"?q=2\">q</a><a href=\"#top\">t</a>"
        "<a href=\" sp.html\">s</a><a href=\"//other.example/p\">o</a>"
        "<a href=\"HTTP://Other.Example:80/Q?x\">O</a>"
        "<a href=\"mailto:a@b\">m</a><a href=\"http://[bad/\">b</a>"
        "<a href=\"javascript:void(0)\">j</a><a href=\"..\">p</a>"
        "</body></html>";
    static const char *const pages[][2] = {
        {"http://h.example/a/b.html", ""},
        {"http://h.example/a/c.html?x=1", ""},
        {"http://h.example/a/", ""},
        {"http://h.example/z/y/w.html", ""},
        {"http://h.example/a/b.html",
         "<base href=\"http://h.example/other/dir/f.html\">"},
        {"https://h.example/a/b.html", ""},
        {"http://h.example:8080/a/b.html", ""},
    };
    struct sl_web_url_cache *cache = sl_web_url_cache_new(0);
    struct sl_web_url_cache *tiny = sl_web_url_cache_new(3);
    uint64_t hits = 0;
    uint64_t misses = 0;
    size_t round = 0;
    size_t i = 0;

    (void)state;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
            char page[2048];
            struct links_run plain;
            struct links_run cached;
            struct links_run small;

            (void)snprintf(page, sizeof(page), body, pages[i][1]);
            plain = links(pages[i][0], NULL, page);
            cached = links_cached(pages[i][0], page, cache);
            small = links_cached(pages[i][0], page, tiny);
            assert_int_equal(plain.rc, 0);
            assert_string_equal(cached.out, plain.out);
            assert_string_equal(small.out, plain.out);
            assert_int_equal(cached.sum.reported, plain.sum.reported);
            assert_int_equal(cached.sum.refused, plain.sum.refused);
            assert_int_equal(cached.sum.invalid, plain.sum.invalid);
            sl_free(plain.out);
            sl_free(cached.out);
            sl_free(small.out);
        }
        sl_web_url_cache_stats(cache, &hits, &misses);
        if (round == 0) {
            /* /a/b.html and /a/c.html?x=1 and /a/ share one directory */
            assert_true(hits > 0);
        } else {
            /* the second round: every cacheable href is known */
            uint64_t h0 = hits;
            uint64_t m0 = misses;

            assert_true(h0 > m0);
        }
    }
    /* the second round made no new resolution */
    {
        uint64_t h1 = 0;
        uint64_t m1 = 0;
        struct links_run again =
            links_cached(pages[3][0], "<a href=\"next.html#x\">", cache);

        sl_web_url_cache_stats(cache, &h1, &m1);
        assert_int_equal(m1, misses);
        assert_int_equal(h1, hits + 1);
        assert_string_equal(again.out, "a http://h.example/z/y/next.html\n");
        sl_free(again.out);
    }
    sl_web_url_cache_free(cache);
    sl_web_url_cache_free(tiny);
}

static void
test_links_sources(void **state)
{
    static const char page[] =
        "<!DOCTYPE html>\n<html><head><title>t</title>\n"
        "<link rel=\"stylesheet\" href=\"/s.css\">\n"
        "<link rel=\"alternate stylesheet\" href=\"/alt.css\">\n"
        "<link rel=\"icon\" href=\"/favicon.ico\">\n"
        "<link rel=\"Canonical\" href=\"/canon\">\n"
        "<link rel=\"alternate\" hreflang=\"de\" href=\"/de/\">\n"
        "<link rel=\"alternate\" type=\"application/rss+xml\" "
        "href=\"feed.xml\">\n"
        "</head><body>\n"
        "<a href=\"one.html\">1</a> <a name=\"anchor\">no href</a>\n"
        "<A HREF=\"../Two.html?x=1&amp;y=2#frag\">2</A>\n"
        "<img src=\"/img.png\"> <script src=\"/s.js\"></script>\n"
        "<map><area href=\"/area\" alt=\"\"></map>\n"
        "<iframe src=\"//other.example/frame\"></iframe>\n"
        "<form action=\"/post\"></form>\n"
        "<a href=\"  /spaced \n\">s</a>\n"
        "</body></html>\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/dir/page.html", NULL, page);
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out,
                        "canonical http://example.com/canon\n"
                        "alternate http://example.com/de/\n"
                        "alternate http://example.com/dir/feed.xml\n"
                        "a http://example.com/dir/one.html\n"
                        "a http://example.com/Two.html?x=1&y=2\n"
                        "area http://example.com/area\n"
                        "iframe http://other.example/frame\n"
                        "a http://example.com/spaced\n");
    assert_int_equal(run.sum.reported, 8);
    assert_int_equal(run.sum.nofollow + run.sum.refused + run.sum.invalid +
                         run.sum.same_document + run.sum.suppressed +
                         run.sum.over_limit,
                     0);
    assert_false(run.sum.meta_nofollow);
    assert_false(run.sum.meta_noindex);
    assert_false(run.sum.base_used);
    sl_free(run.out);
}

static void
test_links_base(void **state)
{
    static const char page[] = "<html><head>\n"
                               "<link rel=canonical href=\"c\">\n"
                               "<base href=\"https://cdn.example/root/\">\n"
                               "<base href=\"http://ignored.example/\">\n"
                               "</head><body>\n"
                               "<a href=\"x\">x</a><a href=\"/y\">y</a>\n"
                               "</body></html>\n";
    static const char bad_base[] = "<html><head>\n"
                                   "<base href=\"javascript:alert(1)\">\n"
                                   "<base href=\"http://second.example/\">\n"
                                   "</head><body><a href=\"x\">x</a>\n";
    static const char body_base[] = "<p><a href=\"x\">x</a>\n"
                                    "<base href=\"/sub/\">\n"
                                    "<a href=\"y\">y</a>\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/a/b", NULL, page);
    assert_string_equal(run.out,
                        "canonical https://cdn.example/root/c\n"
                        "a https://cdn.example/root/x\n"
                        "a https://cdn.example/y\n");
    assert_true(run.sum.base_used);
    sl_free(run.out);
    /* Only the first <base href> counts, even when it is unusable. */
    run = links("http://example.com/a/b", NULL, bad_base);
    assert_string_equal(run.out, "a http://example.com/a/x\n");
    assert_false(run.sum.base_used);
    sl_free(run.out);
    /* A base in the body applies from there on. */
    run = links("http://example.com/a/b", NULL, body_base);
    assert_string_equal(run.out,
                        "a http://example.com/a/x\n"
                        "a http://example.com/sub/y\n");
    sl_free(run.out);
}

static void
test_links_nofollow_and_skips(void **state)
{
    static const char page[] =
        "<body>\n"
        "<a rel=\"nofollow\" href=\"/n1\">n</a>\n"
        "<a rel=\"external NoFollow\" href=\"/n2\">n</a>\n"
        "<area rel=\"nofollow\" href=\"/n3\">\n"
        "<link rel=\"alternate nofollow\" href=\"/n4\">\n"
        "<a rel=\"nofollowers\" href=\"/ok\">ok</a>\n"
        "<a href=\"javascript:void(0)\">j</a>\n"
        "<a href=\"mailto:someone@example.com\">m</a>\n"
        "<a href=\"ftp://example.com/f\">f</a>\n"
        "<a href=\"data:text/html,hi\">d</a>\n"
        "<a href=\"http://user:pw@example.com/\">u</a>\n"
        "<a href=\"http://example.com:99999/\">p</a>\n"
        "<a href=\"#top\">t</a><a href=\"\">e</a><a href=\" # \">w</a>\n"
        "<a href>no value</a>\n"
        "<a href=\"?q\">q</a>\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/p?x", NULL, page);
    assert_string_equal(run.out,
                        "a http://example.com/ok\n"
                        "a http://example.com/p?q\n");
    assert_int_equal(run.sum.nofollow, 4);
    assert_int_equal(run.sum.refused, 4);
    assert_int_equal(run.sum.invalid, 2);
    assert_int_equal(run.sum.same_document, 3);
    assert_int_equal(run.sum.reported, 2);
    sl_free(run.out);
}

static void
test_links_meta_robots(void **state)
{
    static const char nofollow[] =
        "<html><head>\n"
        "<link rel=\"canonical\" href=\"/canon\">\n"
        "<meta name=\"ROBOTS\" content=\"noarchive, NoFollow\">\n"
        "</head><body><a href=\"/a\">a</a><a href=\"/b\">b</a>\n"
        "<a rel=nofollow href=\"/c\">c</a></body></html>\n";
    static const char noindex[] =
        "<html><head><meta name=\"robots\" content=\"noindex\">\n"
        "<meta name=\"description\" content=\"nofollow\">\n"
        "<meta name=\"googlebot\" content=\"nofollow\">\n"
        "</head><body><a href=\"/a\">a</a></body></html>\n";
    static const char none[] =
        "<meta name=robots content=NONE><a href=\"/a\">a</a>\n";
    static const char late[] =
        "<html><head><link rel=alternate href=\"/alt\"></head><body>\n"
        "<a href=\"/a\">a</a>\n"
        "<meta name=\"robots\" content=\"nofollow\">\n"
        "<a href=\"/b\">b</a></body></html>\n";
    /* a canonical link names the page: reported under nofollow, before
     * the meta (it waited for the head's end) or after it */
    static const char canon[] =
        "<html><head><link rel=canonical href=\"c1\">"
        "<link rel=alternate href=\"/alt\">"
        "<meta name=\"robots\" content=\"nofollow\">"
        "<link rel=canonical href=\"c2\"><base href=\"/b/\"></head>"
        "<body><a href=\"/a\">a</a></body></html>\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/", NULL, nofollow);
    assert_string_equal(run.out, "canonical http://example.com/canon\n");
    assert_true(run.sum.meta_nofollow);
    assert_false(run.sum.meta_noindex);
    assert_int_equal(run.sum.suppressed, 2);
    assert_int_equal(run.sum.nofollow, 1);
    sl_free(run.out);
    run = links("http://example.com/", NULL, noindex);
    assert_string_equal(run.out, "a http://example.com/a\n");
    assert_false(run.sum.meta_nofollow);
    assert_true(run.sum.meta_noindex);
    sl_free(run.out);
    run = links("http://example.com/", NULL, none);
    assert_string_equal(run.out, "");
    assert_true(run.sum.meta_nofollow);
    assert_true(run.sum.meta_noindex);
    assert_int_equal(run.sum.suppressed, 1);
    sl_free(run.out);
    /* A meta in the body stops what follows only. */
    run = links("http://example.com/", NULL, late);
    assert_string_equal(run.out,
                        "alternate http://example.com/alt\n"
                        "a http://example.com/a\n");
    assert_true(run.sum.meta_nofollow);
    assert_int_equal(run.sum.suppressed, 1);
    sl_free(run.out);
    run = links("http://example.com/", NULL, canon);
    /* both resolved against the <base> after the meta */
    assert_string_equal(run.out,
                        "canonical http://example.com/b/c1\n"
                        "canonical http://example.com/b/c2\n");
    assert_true(run.sum.meta_nofollow);
    assert_int_equal(run.sum.suppressed, 2);
    sl_free(run.out);
}

static void
test_links_frames(void **state)
{
    static const char page[] =
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Frameset//EN\">\n"
        "<html><head><title>frames</title></head>\n"
        "<frameset cols=\"20%,80%\">\n"
        "  <frame src=\"menu.html\" name=\"menu\">\n"
        "  <frameset rows=\"50%,50%\">\n"
        "    <frame src=\"/top.html\"><frame src=\"javascript:x\">\n"
        "  </frameset>\n"
        "  <noframes><a href=\"noframes.html\">here</a></noframes>\n"
        "</frameset></html>\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/f/", NULL, page);
    assert_string_equal(run.out,
                        "frame http://example.com/f/menu.html\n"
                        "frame http://example.com/top.html\n"
                        "a http://example.com/f/noframes.html\n");
    assert_int_equal(run.sum.refused, 1);
    sl_free(run.out);
}

static void
test_links_broken_markup(void **state)
{
    static const char page[] =
        "<html><head><title>unclosed\n"
        "<body>\n"
        "<a href=unquoted.html target=_blank>u</a>\n"
        "<a href='single.html'>s</a>\n"
        "<a\n  href = \"spaced.html\"\n>sp</a>\n"
        "<a href=\"gt.html\" title=\"a > b\">gt</a>\n"
        "<a href=\"lt.html\" title=\"x<y\">lt</a>\n"
        "<p>1 < 2 and 3 > 2 <b>bold <i>both</b> italic</i>\n"
        "<table><tr><td><a href=\"cell.html\">cell</td></table>\n"
        "<a href=\"multi\nline.html\">ml</a>\n"
        "<!-- <a href=\"commented.html\"> -->\n"
        "<script>document.write('<a href=\"script.html\">');</script>\n"
        "<a href=\"&#x2F;ent&amp;ity.html\">e</a>\n"
        "<div><a href=\"last.html\">never closed\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/", NULL, page);
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out,
                        "a http://example.com/unquoted.html\n"
                        "a http://example.com/single.html\n"
                        "a http://example.com/spaced.html\n"
                        "a http://example.com/gt.html\n"
                        "a http://example.com/lt.html\n"
                        "a http://example.com/cell.html\n"
                        "a http://example.com/multiline.html\n"
                        "a http://example.com/ent&ity.html\n"
                        "a http://example.com/last.html\n");
    sl_free(run.out);
}

static void
test_links_charsets(void **state)
{
    static const char latin1_meta[] =
        "<html><head><title>caf\xe9</title>"
        "<meta http-equiv=\"Content-Type\" "
        "content=\"text/html; charset=iso-8859-1\"></head>"
        "<body><a href=\"caf\xe9.html\">x</a>"
        "<a href=\"/\xe9t\xe9?q=\xe9\">y</a></body></html>";
    static const char latin1_bare[] =
        "<html><body><a href=\"caf\xe9.html\">x</a></body></html>";
    static const char utf8[] =
        "<html><head><meta charset=\"utf-8\"></head>"
        "<body><a href=\"caf\xc3\xa9.html\">x</a></body></html>";
    static const char utf8_says_latin1[] =
        "<html><head><meta charset=\"iso-8859-1\"></head>"
        "<body><a href=\"caf\xc3\xa9.html\">x</a></body></html>";
    static const char want[] = "a http://example.com/d/caf%C3%A9.html\n";
    struct links_run run;

    (void)state;
    run = links("http://example.com/d/", NULL, latin1_meta);
    assert_string_equal(run.out,
                        "a http://example.com/d/caf%C3%A9.html\n"
                        "a http://example.com/%C3%A9t%C3%A9?q=%C3%A9\n");
    sl_free(run.out);
    /* The charset from the HTTP header. */
    run = links("http://example.com/d/", "ISO-8859-1", latin1_bare);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    run = links("http://example.com/d/", "windows-1252", latin1_bare);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    /* Nothing declared: libxml2 falls back to Latin-1. */
    run = links("http://example.com/d/", NULL, latin1_bare);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    run = links("http://example.com/d/", NULL, utf8);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    run = links("http://example.com/d/", "utf-8", utf8);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    /* The header wins over the page's own declaration. */
    run = links("http://example.com/d/", "utf-8", utf8_says_latin1);
    assert_string_equal(run.out, want);
    sl_free(run.out);
    run = links("http://example.com/d/", "no-such-charset", utf8);
    assert_string_equal(run.out, want);
    sl_free(run.out);
}

/* A page with the places where a chunk boundary hurts: end tags of script
 * and style, "</" inside script, comments, long attributes, entities. */
static const char chunky_page[] =
    "<!DOCTYPE html>\n"
    "<html><head><title>chunks &amp; more</title>\n"
    "<base href=\"http://example.com/base/\">\n"
    "<link rel=\"canonical\" href=\"/canonical\">\n"
    "<script>var s = \"<a href='no1'>\"; if (a < b && c > d) {}</script>\n"
    "<style>a > b { color: red } /* </a> */</style>\n"
    "<SCRIPT type=\"text/javascript\">\n"
    "document.write('<a href=\"no2\">js</a>');\n"
    "</SCRIPT>\n"
    "</head>\n"
    "<body onload=\"x<y\">\n"
    "<!-- <a href=\"no3\"> -- -->\n"
    "<a href=\"one.html\" title=\"a > b\">one</a>\n"
    "<a href='two.html?x=1&amp;y=2'>two</a>\n"
    "<a href=three.html>three</a>\n"
    "<a class=\"x\" href=\"http://example.com/a/very/long/path/that/is/"
    "longer/than/sixty/four/bytes/for/sure/index.html?and=a&amp;query=1\" "
    "data-x=\"0123456789012345678901234567890123456789012345678901234567890"
    "123456789\">long</a>\n"
    "<area href=\"area.html\" alt=\"x\">\n"
    "<iframe src=\"frame.html\"></iframe>\n"
    "<a href=\"four.html\" rel=\"nofollow\">four</a>\n"
    "<script>\n"
    "if (x</y) { document.write(\"</div><a href='no4'>\"); }\n"
    "</script>\n"
    "<a href=\"caf&#233;.html\">five</a>\n"
    "<p>text &amp; more < less</p>\n"
    "<style type=\"text/css\">p{}</style>\n"
    "<a href=\"seven.html\">seven</a>\n"
    "</body></html>\n";

static const char chunky_want[] =
    "canonical http://example.com/canonical\n"
    "a http://example.com/base/one.html\n"
    "a http://example.com/base/two.html?x=1&y=2\n"
    "a http://example.com/base/three.html\n"
    "a http://example.com/a/very/long/path/that/is/longer/than/sixty/four/"
    "bytes/for/sure/index.html?and=a&query=1\n"
    "area http://example.com/base/area.html\n"
    "iframe http://example.com/base/frame.html\n"
    "a http://example.com/base/caf%C3%A9.html\n"
    "a http://example.com/base/seven.html\n";

static void
test_links_chunk_boundaries(void **state)
{
    const char *url = "http://example.com/page";
    size_t len = sizeof(chunky_page) - 1;
    struct links_run run;
    size_t steps[] = {1, 2, 3, 7, 13, 64, 65, 4096};
    size_t i = 0;

    (void)state;
    run = links(url, NULL, chunky_page);
    assert_string_equal(run.out, chunky_want);
    assert_int_equal(run.sum.nofollow, 1);
    sl_free(run.out);
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        run = links_cut(url, NULL, 0, chunky_page, len, steps[i], NULL, 0);
        if (strcmp(run.out, chunky_want) != 0) {
            fail_msg("chunks of %zu bytes:\n%s", steps[i], run.out);
        }
        sl_free(run.out);
    }
    /* Every cut into two chunks. */
    for (i = 1; i < len; i++) {
        run = links_cut(url, NULL, 0, chunky_page, len, 0, &i, 1);
        if (strcmp(run.out, chunky_want) != 0) {
            fail_msg("cut at %zu (\"%.10s|%.10s\"):\n%s",
                     i,
                     chunky_page + (i > 10 ? i - 10 : 0),
                     chunky_page + i,
                     run.out);
        }
        sl_free(run.out);
    }
}

/*
 * A 2 MiB page of tags with nothing between them (libxml2 2.9.14 keeps
 * such input unless the extractor drops it, links.c SHRINK_AT), with
 * comments, scripts holding "<a" and a 200 KB comment that spans several
 * pieces: the same links for any chunk size, with the consumed input
 * dropped between pieces (the memory itself is measured by the
 * integration test web_spool.sh).
 */
static void
test_links_big_tag_page(void **state)
{
    const char *url = "http://example.com/page";
    size_t steps[] = {0, 1000, 4096, 16384, 65536, 65537, 300000};
    struct sl_buf page;
    struct sl_buf want;
    struct links_run run;
    size_t i = 0;
    size_t j = 0;

    (void)state;
    sl_buf_init(&page, 8u << 20);
    sl_buf_init(&want, 1u << 20);
    assert_int_equal(sl_buf_appendf(&page,
                                    "<html><head><title>t</title>"
                                    "</head><body>"),
                     0);
    for (i = 0; i < 4000; i++) {
        for (j = 0; j < 30; j++) {
            assert_int_equal(sl_buf_appendf(&page, "<br><img src=x>"), 0);
        }
        assert_int_equal(sl_buf_appendf(&page, "<a href=\"/l/%zu\">x</a>", i),
                         0);
        assert_int_equal(
            sl_buf_appendf(&want, "a http://example.com/l/%zu\n", i), 0);
        if (i % 10 == 3) {
            assert_int_equal(
                sl_buf_appendf(&page, "<!-- <a href=\"/no/%zu\"> -->", i), 0);
        }
        if (i % 50 == 7) {
            assert_int_equal(sl_buf_appendf(&page,
                                            "<script>var s = \"<a href='/no/"
                                            "s%zu'>\"; if (a<b) f();</script>",
                                            i),
                             0);
        }
        if (i == 2000) {
            assert_int_equal(sl_buf_appendf(&page, "<!--"), 0);
            for (j = 0; j < 10000; j++) {
                assert_int_equal(sl_buf_appendf(&page, "<a href=\"/c\"> "), 0);
            }
            assert_int_equal(sl_buf_appendf(&page, "-->"), 0);
        }
    }
    assert_int_equal(sl_buf_appendf(&page, "</body></html>"), 0);
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        run = links_cut(url, NULL, 0, page.data, page.len, steps[i], NULL, 0);
        assert_int_equal(run.rc, 0);
        if (strcmp(run.out, want.data) != 0) {
            fail_msg("chunks of %zu bytes: %zu bytes of links, want %zu",
                     steps[i],
                     strlen(run.out),
                     want.len);
        }
        sl_free(run.out);
    }
    sl_buf_free(&page);
    sl_buf_free(&want);
}

static void
test_links_limit(void **state)
{
    struct sl_buf page;
    struct links_run run;
    size_t i = 0;

    (void)state;
    sl_buf_init(&page, 1u << 20);
    for (i = 0; i < 50; i++) {
        assert_int_equal(sl_buf_appendf(&page, "<a href=\"/l%zu\">x</a>\n", i),
                         0);
    }
    run = links_cut(
        "http://example.com/", NULL, 10, page.data, page.len, 0, NULL, 0);
    assert_int_equal(run.sum.reported, 10);
    assert_int_equal(run.sum.over_limit, 40);
    assert_non_null(strstr(run.out, "/l9\n"));
    assert_null(strstr(run.out, "/l10\n"));
    sl_free(run.out);
    /* The default limit. */
    sl_buf_reset(&page);
    for (i = 0; i < SL_WEB_LINKS_DEFAULT_MAX + 5; i++) {
        assert_int_equal(sl_buf_appendf(&page, "<a href=/%zu>", i), 0);
    }
    run = links_cut(
        "http://example.com/", NULL, 0, page.data, page.len, 0, NULL, 0);
    assert_int_equal(run.sum.reported, SL_WEB_LINKS_DEFAULT_MAX);
    assert_int_equal(run.sum.over_limit, 5);
    sl_free(run.out);
    sl_buf_free(&page);
}

/* More head links than the waiting list holds: all are reported. */
static void
test_links_many_head_links(void **state)
{
    struct sl_buf page;
    struct links_run run;
    size_t i = 0;

    (void)state;
    sl_buf_init(&page, 1u << 22);
    assert_int_equal(sl_buf_appendf(&page, "<html><head>"), 0);
    for (i = 0; i < 3000; i++) {
        assert_int_equal(
            sl_buf_appendf(&page,
                           "<link rel=alternate href=\"/some/rather/long/"
                           "alternate/path/%zu\">\n",
                           i),
            0);
    }
    assert_int_equal(sl_buf_appendf(&page, "</head><body>x</body></html>"), 0);
    run = links_cut(
        "http://example.com/", NULL, 0, page.data, page.len, 0, NULL, 0);
    assert_int_equal(run.sum.reported, 3000);
    assert_non_null(strstr(run.out, "/path/0\n"));
    assert_non_null(strstr(run.out, "/path/2999\n"));
    sl_free(run.out);
    sl_buf_free(&page);
}

static void
test_links_errors(void **state)
{
    static const char page[] = "<a href=/1>1</a><a href=/2>2</a>"
                               "<a href=/3>3</a><a href=/4>4</a>";
    struct sl_web_links *lx = NULL;
    struct sl_web_links_summary sum;
    struct collect c;

    (void)state;
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 4096);
    assert_int_equal(sl_web_links_begin("ftp://x/", NULL, 0, on_link, &c, &lx),
                     SL_EACCES);
    assert_null(lx);
    assert_int_equal(sl_web_links_begin("not a url", NULL, 0, on_link, &c, &lx),
                     SL_EINVAL);
    assert_int_equal(sl_web_links_begin("http://x/", NULL, 0, NULL, &c, &lx),
                     SL_EINVAL);
    /* The callback stops the extractor when the block is parsed, at the
     * end of a short page; it stays failed. */
    c.fail_at = 2;
    assert_int_equal(sl_web_links_begin("http://x/", NULL, 0, on_link, &c, &lx),
                     0);
    assert_int_equal(sl_web_links_feed(lx, page, sizeof(page) - 1), 0);
    assert_int_equal(c.count, 0);
    assert_int_equal(sl_web_links_end(lx, &sum), SL_ECANCELED);
    assert_int_equal(c.count, 2);
    assert_int_equal(sum.reported, 2);
    assert_string_equal(c.out.data, "a http://x/1\n");
    /* A page of more than a block: the feed that fills it fails, and
     * the next is refused. */
    sl_buf_free(&c.out);
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 4096);
    c.fail_at = 2;
    assert_int_equal(sl_web_links_begin("http://x/", NULL, 0, on_link, &c, &lx),
                     0);
    {
        size_t fed = 0;
        int rc = 0;

        while (rc == 0 && fed <= SL_WEB_HTML_BLOCK) {
            rc = sl_web_links_feed(lx, page, sizeof(page) - 1);
            fed += sizeof(page) - 1;
        }
        assert_int_equal(rc, SL_ECANCELED);
        assert_true(fed >= SL_WEB_HTML_BLOCK);
    }
    assert_int_equal(sl_web_links_feed(lx, page, sizeof(page) - 1),
                     SL_EBADSTATE);
    assert_int_equal(sl_web_links_end(lx, &sum), SL_ECANCELED);
    assert_int_equal(c.count, 2);
    /* Freed half-way: no callback (the block was never parsed), no
     * leak. */
    c.fail_at = 0;
    c.count = 0;
    assert_int_equal(sl_web_links_begin("http://x/", NULL, 0, on_link, &c, &lx),
                     0);
    assert_int_equal(sl_web_links_feed(lx, page, 20), 0);
    sl_web_links_free(lx);
    sl_web_links_free(NULL);
    assert_int_equal(c.count, 0);
    /* An empty page. */
    assert_int_equal(sl_web_links_begin("http://x/", NULL, 0, on_link, &c, &lx),
                     0);
    assert_int_equal(sl_web_links_end(lx, NULL), 0);
    sl_buf_free(&c.out);
}

/* ------------------------------------------------------------------------
 * Sitemaps.
 * --------------------------------------------------------------------- */

static int
on_loc(void *ctx, const char *url, const char *lastmod, int nested)
{
    struct collect *c = ctx;

    c->count++;
    if (c->fail_at != 0 && c->count == c->fail_at) {
        return SL_ECANCELED;
    }
    return sl_buf_appendf(&c->out,
                          "%s %s %s\n",
                          nested ? "sitemap" : "url",
                          url,
                          lastmod != NULL ? lastmod : "-");
}

struct sitemap_run {
    char *out;
    struct sl_web_sitemap_summary sum;
    int feed_rc; /* first non-zero feed result */
    int rc;      /* end's result */
};

static struct sitemap_run
sitemap_step(const char *data, size_t len, size_t step, size_t max)
{
    struct sitemap_run run;
    struct collect c;
    struct sl_web_sitemap *sm = NULL;
    size_t at = 0;

    memset(&run, 0, sizeof(run));
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 1u << 24);
    assert_int_equal(
        sl_web_sitemap_begin(
            "http://example.com/sitemap.xml", max, on_loc, &c, &sm),
        0);
    if (step == 0) {
        step = len > 0 ? len : 1;
    }
    for (at = 0; at < len && run.feed_rc == 0; at += step) {
        size_t k = len - at < step ? len - at : step;

        run.feed_rc = sl_web_sitemap_feed(sm, data + at, k);
    }
    run.rc = sl_web_sitemap_end(sm, &run.sum);
    run.out = sl_strdup(c.out.data != NULL ? c.out.data : "");
    assert_int_equal(c.count, run.sum.reported);
    sl_buf_free(&c.out);
    return run;
}

static const char urlset[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
    "  <url>\n"
    "    <loc>\n      http://Example.com/a?x=1&amp;y=2\n    </loc>\n"
    "    <lastmod> 2024-01-02T03:04:05+00:00 </lastmod>\n"
    "    <changefreq>daily</changefreq><priority>0.8</priority>\n"
    "  </url>\n"
    "  <url><loc><![CDATA[http://example.com/b c]]></loc></url>\n"
    "  <url><loc>/relative</loc><lastmod>2024-01-01</lastmod></url>\n"
    "  <url><loc>ftp://example.com/f</loc></url>\n"
    "  <url><lastmod>2024-01-01</lastmod></url>\n"
    "  <url><loc>   </loc></url>\n"
    "  <url><loc>http://example.com/first</loc>"
    "<loc>http://example.com/second</loc></url>\n"
    "  <sitemap><loc>http://example.com/not-in-urlset</loc></sitemap>\n"
    "  <url><loc>http://example.com/long-lastmod</loc><lastmod>"
    "2024-01-01T00:00:00+00:00 and then a lot more text that no date has"
    "</lastmod></url>\n"
    "</urlset>\n";

static const char urlset_want[] =
    "url http://example.com/a?x=1&y=2 2024-01-02T03:04:05+00:00\n"
    "url http://example.com/b%20c -\n"
    "url http://example.com/relative 2024-01-01\n"
    "url http://example.com/first -\n"
    "url http://example.com/long-lastmod -\n";

static void
test_sitemap_urlset(void **state)
{
    size_t steps[] = {0, 1, 2, 7, 100};
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        struct sitemap_run run =
            sitemap_step(urlset, sizeof(urlset) - 1, steps[i], 0);

        assert_int_equal(run.feed_rc, 0);
        assert_int_equal(run.rc, 0);
        if (strcmp(run.out, urlset_want) != 0) {
            fail_msg("chunks of %zu:\n%s", steps[i], run.out);
        }
        assert_int_equal(run.sum.reported, 5);
        assert_int_equal(run.sum.refused, 1);
        assert_int_equal(run.sum.invalid, 2);
        assert_false(run.sum.is_index);
        sl_free(run.out);
    }
}

static void
test_sitemap_index(void **state)
{
    static const char index[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<sm:sitemapindex "
        "xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
        "<sm:sitemap><sm:loc>http://example.com/s1.xml.gz</sm:loc>"
        "<sm:lastmod>2004-10-01T18:23:17+00:00</sm:lastmod></sm:sitemap>\n"
        "<sm:sitemap><sm:loc>https://example.com/s2.xml</sm:loc>"
        "</sm:sitemap>\n"
        "<sm:url><sm:loc>http://example.com/not-in-index</sm:loc></sm:url>\n"
        "</sm:sitemapindex>\n";
    struct sitemap_run run;

    (void)state;
    run = sitemap_step(index, sizeof(index) - 1, 3, 0);
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out,
                        "sitemap http://example.com/s1.xml.gz "
                        "2004-10-01T18:23:17+00:00\n"
                        "sitemap https://example.com/s2.xml -\n");
    assert_true(run.sum.is_index);
    sl_free(run.out);
}

static void
test_sitemap_limit(void **state)
{
    struct sl_buf doc;
    struct sitemap_run run;
    size_t i = 0;

    (void)state;
    sl_buf_init(&doc, 1u << 20);
    assert_int_equal(sl_buf_appendf(&doc, "<urlset>"), 0);
    for (i = 0; i < 5; i++) {
        assert_int_equal(
            sl_buf_appendf(&doc, "<url><loc>http://e.x/%zu</loc></url>", i), 0);
    }
    assert_int_equal(sl_buf_appendf(&doc, "</urlset>"), 0);
    run = sitemap_step(doc.data, doc.len, 0, 2);
    assert_int_equal(run.rc, 0);
    assert_string_equal(run.out, "url http://e.x/0 -\nurl http://e.x/1 -\n");
    assert_int_equal(run.sum.over_limit, 3);
    sl_free(run.out);
    sl_buf_free(&doc);
}

/* @in compressed as one gzip member into a new buffer (*len bytes). */
static char *
gzip(const char *in, size_t n, size_t *len)
{
    z_stream zs;
    size_t cap = n + 1024;
    char *out = sl_malloc(cap);

    memset(&zs, 0, sizeof(zs));
    assert_int_equal(
        deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *len = cap - zs.avail_out;
    (void)deflateEnd(&zs);
    return out;
}

static void
test_sitemap_gzip(void **state)
{
    size_t len = 0;
    char *gz = gzip(urlset, sizeof(urlset) - 1, &len);
    struct sitemap_run run;
    size_t steps[] = {0, 1, 5};
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        run = sitemap_step(gz, len, steps[i], 0);
        assert_int_equal(run.rc, 0);
        assert_string_equal(run.out, urlset_want);
        sl_free(run.out);
    }
    /* Cut short. */
    run = sitemap_step(gz, len - 12, 0, 0);
    assert_int_equal(run.rc, SL_ETRUNCATED);
    sl_free(run.out);
    /* Damaged. */
    memset(gz + 20, 0xff, 8);
    run = sitemap_step(gz, len, 0, 0);
    assert_int_equal(run.rc, SL_ECORRUPT);
    sl_free(run.out);
    sl_free(gz);
}

/* A gzip bomb stops at SL_WEB_SITEMAP_MAX_BYTES of XML. */
static void
test_sitemap_size_limit(void **state)
{
    size_t n = SL_WEB_SITEMAP_MAX_BYTES + (1u << 20);
    char *xml = sl_malloc(n);
    size_t len = 0;
    size_t i = 0;
    char *gz = NULL;
    struct sitemap_run run;
    static const char start[] = "<urlset><url><loc>http://e.x/</loc></url>";

    (void)state;
    /* Short text nodes between elements: libxml2 has its own limit for
     * one huge text node. */
    memset(xml, ' ', n);
    for (i = 0; i + 4 <= n; i += 1024) {
        memcpy(xml + i, "<x/>", 4);
    }
    memcpy(xml, start, sizeof(start) - 1);
    gz = gzip(xml, n, &len);
    sl_free(xml);
    run = sitemap_step(gz, len, 0, 0);
    assert_int_equal(run.feed_rc, SL_ETOOLARGE);
    assert_int_equal(run.rc, SL_ETOOLARGE);
    assert_string_equal(run.out, "url http://e.x/ -\n");
    sl_free(run.out);
    sl_free(gz);
}

/*
 * A document without any element is no sitemap, however it is cut:
 * fuzz_sitemap found that libxml2 calls "\0\0\0<\0c\0\0" well-formed
 * when it is fed in these pieces (and not when fed at once), and the
 * sitemap then ended without an error.
 */
static void
test_sitemap_no_root(void **state)
{
    static const char doc[] = "\0\0\0<\0c\0\0";
    static const char comment[] = "<?xml version=\"1.0\"?><!-- none -->";
    static const size_t cuts[] = {2, 6};
    struct sitemap_run run;
    struct collect c;
    struct sl_web_sitemap *sm = NULL;
    size_t at = 0;
    size_t i = 0;

    (void)state;
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 4096);
    assert_int_equal(sl_web_sitemap_begin("http://e.x/s", 0, on_loc, &c, &sm),
                     0);
    for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        assert_int_equal(sl_web_sitemap_feed(sm, doc + at, cuts[i] - at), 0);
        at = cuts[i];
    }
    assert_int_equal(sl_web_sitemap_feed(sm, doc + at, sizeof(doc) - 1 - at),
                     0);
    assert_int_equal(sl_web_sitemap_end(sm, NULL), SL_ETRUNCATED);
    assert_int_equal(c.count, 0);
    sl_buf_free(&c.out);
    run = sitemap_step(doc, sizeof(doc) - 1, 0, 0);
    assert_true(run.rc == SL_ECORRUPT || run.rc == SL_ETRUNCATED);
    sl_free(run.out);
    run = sitemap_step(comment, sizeof(comment) - 1, 0, 0);
    assert_int_equal(run.rc, SL_ETRUNCATED);
    sl_free(run.out);
}

static void
test_sitemap_bad_input(void **state)
{
    static const char malformed[] =
        "<urlset><url><loc>http://e.x/1</loc></url><url></urlset>"
        "<url><loc>http://e.x/2</loc></url>";
    static const char truncated[] =
        "<urlset><url><loc>http://e.x/1</loc></url><url><loc>http://e.x/2";
    static const char html[] = "<!DOCTYPE html><html><body>Not found</body>"
                               "</html>";
    static const char entities[] =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE urlset [\n"
        "<!ENTITY ext SYSTEM \"file:///etc/passwd\">\n"
        "<!ENTITY a \"http://evil.example/\">\n"
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
        "]>\n"
        "<urlset><url><loc>&b;</loc></url>"
        "<url><loc>&ext;</loc></url></urlset>";
    static const char junk[] = "\x00\x01garbage\xff\xfe";
    struct sitemap_run run;
    struct collect c;
    struct sl_web_sitemap *sm = NULL;

    (void)state;
    run = sitemap_step(malformed, sizeof(malformed) - 1, 0, 0);
    assert_int_equal(run.feed_rc, SL_ECORRUPT);
    assert_int_equal(run.rc, SL_ECORRUPT);
    assert_string_equal(run.out, "url http://e.x/1 -\n");
    sl_free(run.out);
    run = sitemap_step(truncated, sizeof(truncated) - 1, 4, 0);
    assert_int_equal(run.feed_rc, 0);
    assert_int_equal(run.rc, SL_ETRUNCATED);
    assert_string_equal(run.out, "url http://e.x/1 -\n");
    sl_free(run.out);
    run = sitemap_step(html, sizeof(html) - 1, 0, 0);
    assert_int_equal(run.rc, SL_EINVAL);
    assert_string_equal(run.out, "");
    sl_free(run.out);
    run = sitemap_step(entities, sizeof(entities) - 1, 0, 0);
    assert_null(strstr(run.out, "evil"));
    assert_null(strstr(run.out, "root"));
    assert_int_not_equal(run.rc, 0);
    sl_free(run.out);
    run = sitemap_step(junk, sizeof(junk) - 1, 0, 0);
    assert_true(run.rc == SL_ECORRUPT || run.rc == SL_ETRUNCATED);
    sl_free(run.out);
    run = sitemap_step("", 0, 0, 0);
    assert_int_equal(run.rc, SL_ETRUNCATED);
    sl_free(run.out);
    /* The callback stops the parser. */
    memset(&c, 0, sizeof(c));
    sl_buf_init(&c.out, 4096);
    c.fail_at = 1;
    assert_int_equal(sl_web_sitemap_begin("http://e.x/s", 0, on_loc, &c, &sm),
                     0);
    assert_int_equal(sl_web_sitemap_feed(sm, urlset, sizeof(urlset) - 1),
                     SL_ECANCELED);
    assert_int_equal(sl_web_sitemap_feed(sm, "x", 1), SL_EBADSTATE);
    assert_int_equal(sl_web_sitemap_end(sm, NULL), SL_ECANCELED);
    assert_int_equal(c.count, 1);
    assert_int_equal(sl_web_sitemap_begin("mailto:x@y", 0, on_loc, &c, &sm),
                     SL_EACCES);
    assert_null(sm);
    assert_int_equal(sl_web_sitemap_begin("http://e.x/s", 0, on_loc, &c, &sm),
                     0);
    assert_int_equal(sl_web_sitemap_feed(sm, "<urlset><url>", 13), 0);
    sl_web_sitemap_free(sm);
    sl_web_sitemap_free(NULL);
    sl_buf_free(&c.out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_normalize),
        cmocka_unit_test(test_url_host_decoded),
        cmocka_unit_test(test_url_length_limit),
        cmocka_unit_test(test_url_resolve_rfc3986),
        cmocka_unit_test(test_url_resolve_base),
        cmocka_unit_test(test_url_host_key),
        cmocka_unit_test(test_robots_rfc_example),
        cmocka_unit_test(test_robots_longest_match),
        cmocka_unit_test(test_robots_wildcards),
        cmocka_unit_test(test_robots_percent_encoding),
        cmocka_unit_test(test_robots_groups),
        cmocka_unit_test(test_robots_delay_sitemaps),
        cmocka_unit_test(test_robots_special),
        cmocka_unit_test(test_robots_tolerant),
        cmocka_unit_test(test_robots_tag),
        cmocka_unit_test(test_robots_garbage),
        cmocka_unit_test(test_robots_size_limit),
        cmocka_unit_test(test_robots_pathological),
        cmocka_unit_test(test_links_sources),
        cmocka_unit_test(test_links_empty_head),
        cmocka_unit_test(test_links_meta_against_header),
        cmocka_unit_test(test_links_cache),
        cmocka_unit_test(test_links_base),
        cmocka_unit_test(test_links_nofollow_and_skips),
        cmocka_unit_test(test_links_meta_robots),
        cmocka_unit_test(test_links_frames),
        cmocka_unit_test(test_links_broken_markup),
        cmocka_unit_test(test_links_charsets),
        cmocka_unit_test(test_links_chunk_boundaries),
        cmocka_unit_test(test_links_big_tag_page),
        cmocka_unit_test(test_links_limit),
        cmocka_unit_test(test_links_many_head_links),
        cmocka_unit_test(test_links_errors),
        cmocka_unit_test(test_sitemap_urlset),
        cmocka_unit_test(test_sitemap_index),
        cmocka_unit_test(test_sitemap_limit),
        cmocka_unit_test(test_sitemap_gzip),
        cmocka_unit_test(test_sitemap_size_limit),
        cmocka_unit_test(test_sitemap_bad_input),
        cmocka_unit_test(test_sitemap_no_root),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
