/*
 * The URL normal form of web.h.  libcurl's URL API parses, resolves
 * relative references, removes dot segments, lower-cases the scheme,
 * drops default ports and encodes non-ASCII bytes.  What libcurl 7.88
 * does not do is done here, around it:
 *
 * - the fragment is cut off before libcurl sees the input (libcurl 7.88
 *   refuses a fragment with a space, and resolves "#frag" and "" against
 *   "http://a/b/c/d;p?q" to "http://a/b/c/" instead of the base itself);
 * - spaces become %20 first (CURLU_URLENCODE writes '+' in a query, which
 *   is not the same query);
 * - the scheme is checked first (libcurl parses ftp: and file: happily and
 *   fails on mailto: and javascript: with assorted codes);
 * - the host is lower-cased (libcurl keeps "Example.COM");
 * - percent-encodings get upper-case hex digits and the characters that
 *   may not appear in a path or query are encoded (libcurl writes %c3%a9
 *   and keeps "<>\"{}|\\^`" as they are).
 */
#include <string.h>
#include <strings.h>

#include "web/web_int.h"

/* The prepared input: spaces become three bytes. */
#define PREPARED_MAX (3u * SL_WEB_URL_MAX)

static int
ascii_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
ascii_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int
hex_digit(int c)
{
    return ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
ascii_upper(int c)
{
    return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

static int
hex_value(int c)
{
    return ascii_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* RFC 3986 unreserved: ALPHA DIGIT "-" "." "_" "~". */
static int
unreserved(int c)
{
    return ascii_alpha(c) || ascii_digit(c) || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/* Characters RFC 3986 allows in a path or query besides '%' escapes:
 * unreserved, sub-delims, ':', '@', '/' and '?'. */
static int
path_char(int c)
{
    return ascii_alpha(c) || ascii_digit(c) ||
           (c != '\0' && strchr("-._~!$&'()*+,;=:@/?", c) != NULL);
}

static int
from_curlu(CURLUcode uc)
{
    switch (uc) {
    case CURLUE_OK:
        return 0;
    case CURLUE_UNSUPPORTED_SCHEME:
        return SL_EACCES;
    case CURLUE_OUT_OF_MEMORY:
        return SL_EINTERNAL;
    default:
        return SL_EINVAL;
    }
}

/*
 * Copy @in into @b as libcurl should see it: C0 controls and spaces
 * trimmed at both ends (HTML allows whitespace around an href), tabs and
 * line breaks inside removed (as browsers do), the fragment cut off and
 * spaces written as %20.  @b is initialised here and always holds a
 * string on success (possibly empty).
 */
static int
prepare(const char *in, struct sl_buf *b)
{
    const char *s = in;
    const char *e = in + strlen(in);
    const char *p = NULL;
    int rc = 0;

    sl_buf_init(b, PREPARED_MAX);
    while (s < e && (unsigned char)*s <= 0x20) {
        s++;
    }
    while (e > s && (unsigned char)e[-1] <= 0x20) {
        e--;
    }
    if ((size_t)(e - s) > SL_WEB_URL_MAX) {
        return SL_ETOOLARGE;
    }
    for (p = s; p < e && *p != '#' && rc == 0; p++) {
        if (*p == '\t' || *p == '\n' || *p == '\r') {
            continue;
        }
        rc = *p == ' ' ? sl_buf_append(b, "%20", 3) : sl_buf_append(b, p, 1);
    }
    if (rc == 0) {
        rc = sl_buf_append(b, "", 0);
    }
    return rc;
}

/*
 * Refuse a scheme other than http(s) before libcurl parses, so that every
 * such URL gets the same SL_EACCES (RFC 3986 3.1: ALPHA *( ALPHA / DIGIT /
 * "+" / "-" / "." ) ":").  No scheme (a relative reference) passes.
 */
static int
check_scheme(const char *s)
{
    size_t i = 0;

    if (!ascii_alpha((unsigned char)s[0])) {
        return 0;
    }
    while (ascii_alpha((unsigned char)s[i]) ||
           ascii_digit((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' ||
           s[i] == '.') {
        i++;
    }
    if (s[i] != ':') {
        return 0;
    }
    if ((i == 4 && strncasecmp(s, "http", 4) == 0) ||
        (i == 5 && strncasecmp(s, "https", 5) == 0)) {
        return 0;
    }
    return SL_EACCES;
}

/*
 * Parse @in, alone or relative to @base (NULL: @in must be absolute), into
 * a new handle.  An empty reference (after the fragment is cut) is the
 * base itself (RFC 3986 5.2.2; libcurl 7.88 would drop the last segment).
 */
static int
parse(CURLU *base, const char *in, CURLU **out)
{
    struct sl_buf b;
    CURLU *h = NULL;
    CURLUcode uc = CURLUE_OK;
    int rc = 0;

    *out = NULL;
    rc = prepare(in, &b);
    if (rc != 0) {
        goto out;
    }
    rc = check_scheme(b.data);
    if (rc != 0) {
        goto out;
    }
    h = base != NULL ? curl_url_dup(base) : curl_url();
    if (h == NULL) {
        rc = SL_EINTERNAL;
        goto out;
    }
    if (base == NULL || b.len > 0) {
        uc = curl_url_set(h, CURLUPART_URL, b.data, CURLU_URLENCODE);
        rc = from_curlu(uc);
    }
out:
    sl_buf_free(&b);
    if (rc != 0) {
        curl_url_cleanup(h);
        return rc;
    }
    *out = h;
    return 0;
}

int
sl__web_pct_append(struct sl_buf *b, const char *s, size_t n, int decode)
{
    static const char hex[] = "0123456789ABCDEF";
    char esc[3];
    size_t i = 0;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '%' && i + 2 < n && hex_digit((unsigned char)s[i + 1]) &&
            hex_digit((unsigned char)s[i + 2])) {
            unsigned v =
                (unsigned)(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));

            if (decode && unreserved((int)v)) {
                esc[0] = (char)v;
                rc = sl_buf_append(b, esc, 1);
            } else {
                esc[0] = '%';
                esc[1] = (char)ascii_upper((unsigned char)s[i + 1]);
                esc[2] = (char)ascii_upper((unsigned char)s[i + 2]);
                rc = sl_buf_append(b, esc, 3);
            }
            i += 2;
        } else if (path_char(c)) {
            rc = sl_buf_append(b, s + i, 1);
        } else {
            esc[0] = '%';
            esc[1] = hex[c >> 4];
            esc[2] = hex[c & 15];
            rc = sl_buf_append(b, esc, 3);
        }
    }
    return rc;
}

/*
 * Append @url to @b with its path and query (everything after the
 * authority) re-encoded by sl__web_pct_append, nothing decoded.
 */
static int
encode_rest(const char *url, struct sl_buf *b)
{
    const char *auth = strstr(url, "://");
    const char *p = NULL;
    int rc = 0;

    if (SL_NEVER(auth == NULL)) {
        return SL_EINVAL;
    }
    p = strchr(auth + 3, '/');
    if (p == NULL) {
        p = auth + strlen(auth);
    }
    rc = sl_buf_append(b, url, (size_t)(p - url));
    if (rc == 0) {
        rc = sl__web_pct_append(b, p, strlen(p), 0);
    }
    return rc;
}

/* Lower-case the ASCII letters of @s; 1 when something changed. */
static int
lower_ascii(char *s)
{
    int changed = 0;

    for (; *s != '\0'; s++) {
        if (*s >= 'A' && *s <= 'Z') {
            *s = (char)(*s - 'A' + 'a');
            changed = 1;
        }
    }
    return changed;
}

/*
 * Whether @host, as libcurl gives it (percent-encodings decoded), may be
 * part of a normal form: valid UTF-8 without control characters (C0, DEL,
 * C1).  libcurl 7.88 decodes "a%7fb.com" into a host with a DEL byte,
 * which it refuses when the result is given to it again, and "%ff.com"
 * into one that is not UTF-8; it refuses only "%00", space and the
 * delimiters.  Keeping the encoding would not do: libcurl decodes it
 * again on the next parse.  Such a host is no DNS name (IDNA refuses
 * these code points), so the URL cannot be fetched: refused as invalid,
 * like "a%20b.com".
 */
static int
host_ok(const char *host)
{
    const unsigned char *p = (const unsigned char *)host;
    size_t n = strlen(host);
    size_t i = 0;

    for (i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f ||
            (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 &&
             p[i + 1] <= 0x9f)) {
            return 0;
        }
    }
    return sl_utf8_valid(host, n);
}

/*
 * Whether the IPv6 zone of @h, if it has one, is a zone RFC 6874 allows
 * (unreserved characters).  libcurl keeps the zone apart from the host and
 * writes its bytes back as they came, so "[::1%25\xec]" would give a normal
 * form that is not UTF-8 (fuzz_url found it); such a URL is refused.
 */
static int
zone_ok(CURLU *h)
{
    char *zone = NULL;
    const char *p = NULL;
    int ok = 1;

    if (curl_url_get(h, CURLUPART_ZONEID, &zone, 0) != CURLUE_OK) {
        return 1;
    }
    for (p = zone; *p != '\0'; p++) {
        if (!unreserved((unsigned char)*p)) {
            ok = 0;
            break;
        }
    }
    ok = ok && zone[0] != '\0';
    curl_free(zone);
    return ok;
}

/*
 * Whether @host may be an IPv4 address in a form other than the dotted
 * quad ("615", "0x7f.1", "010.0.0.1"), which libcurl rewrites ("0.0.2.103")
 * when it parses a URL, but not when the host was percent-encoded
 * ("%3615" decodes to "615" and stays): such a host is normalised by
 * parsing the result once more.  Only digits, a-f, 'x' and dots, starting
 * with a digit, and not a plain dotted quad.
 */
static int
ipv4_maybe(const char *host)
{
    unsigned parts = 0;
    const char *p = host;

    if (!ascii_digit((unsigned char)host[0]) ||
        host[strspn(host, "0123456789abcdefx.")] != '\0') {
        return 0;
    }
    while (*p != '\0') {
        size_t n = strspn(p, "0123456789");

        if (n == 0 || n > 3 || (n > 1 && p[0] == '0') ||
            (n == 3 && strncmp(p, "255", 3) > 0) ||
            (p[n] != '.' && p[n] != '\0') || ++parts > 4) {
            return 1;
        }
        p += n + (p[n] == '.');
    }
    return parts != 4 || host[strlen(host) - 1] == '.';
}

/*
 * Bring the parsed handle @h into the normal form (scheme, user info,
 * host, fragment) and write the normalised URL to *out (new string,
 * caller frees with sl_free); *ipv4 tells whether the host may still be
 * an IPv4 address to rewrite (ipv4_maybe).
 */
static int
finish_once(CURLU *h, char **out, int *ipv4)
{
    struct sl_buf b;
    char *part = NULL;
    char *url = NULL;
    CURLUcode uc = CURLUE_OK;
    int rc = 0;

    *out = NULL;
    sl_buf_init(&b, SL_WEB_URL_MAX);
    uc = curl_url_get(h, CURLUPART_SCHEME, &part, 0);
    if (uc != CURLUE_OK) {
        rc = from_curlu(uc);
        goto out;
    }
    if (strcmp(part, "http") != 0 && strcmp(part, "https") != 0) {
        rc = SL_EACCES;
        goto out;
    }
    curl_free(part);
    part = NULL;
    if (curl_url_get(h, CURLUPART_USER, &part, 0) == CURLUE_OK ||
        curl_url_get(h, CURLUPART_PASSWORD, &part, 0) == CURLUE_OK) {
        rc = SL_EINVAL;
        goto out;
    }
    uc = curl_url_get(h, CURLUPART_HOST, &part, 0);
    if (uc != CURLUE_OK || part[0] == '\0' || !host_ok(part) || !zone_ok(h)) {
        rc = uc == CURLUE_OUT_OF_MEMORY ? SL_EINTERNAL : SL_EINVAL;
        goto out;
    }
    if (lower_ascii(part)) {
        uc = curl_url_set(h, CURLUPART_HOST, part, 0);
        if (uc != CURLUE_OK) {
            rc = from_curlu(uc);
            goto out;
        }
    }
    *ipv4 = ipv4_maybe(part);
    uc = curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0);
    if (uc == CURLUE_OK) {
        uc = curl_url_get(h, CURLUPART_URL, &url, CURLU_NO_DEFAULT_PORT);
    }
    if (uc != CURLUE_OK) {
        rc = from_curlu(uc);
        goto out;
    }
    rc = encode_rest(url, &b);
    if (rc == 0) {
        *out = sl_strdup(b.data);
    }
out:
    curl_free(part);
    curl_free(url);
    sl_buf_free(&b);
    return rc;
}

/* finish_once, and once more after parsing the result again when its host
 * may be an IPv4 address libcurl has not rewritten (fuzz_url found
 * "https://%3615/" normalised to "https://615/", whose normal form is
 * "https://0.0.2.103/"). */
static int
finish(CURLU *h, char **out)
{
    int ipv4 = 0;
    int rc = finish_once(h, out, &ipv4);

    if (rc == 0 && ipv4) {
        rc = from_curlu(curl_url_set(h, CURLUPART_URL, *out, 0));
        SL_FREE(*out);
        if (rc == 0) {
            rc = finish_once(h, out, &ipv4);
        }
    }
    return rc;
}

/* The directory of the normal form @norm: up to and including the last
 * '/' of its path (no query); NULL when it has no path. */
static char *
url_dir(const char *norm)
{
    const char *auth = strstr(norm, "://");
    const char *path = auth != NULL ? strchr(auth + 3, '/') : NULL;
    const char *end = NULL;
    const char *slash = NULL;

    if (path == NULL) {
        return NULL;
    }
    end = strchr(path, '?');
    if (end == NULL) {
        end = path + strlen(path);
    }
    for (slash = end - 1; *slash != '/'; slash--) {
    }
    return sl_strndup(norm, (size_t)(slash - norm) + 1);
}

int
sl__web_url_base(const char *url, CURLU **out)
{
    return sl__web_url_base_dir(url, out, NULL);
}

int
sl__web_url_base_dir(const char *url, CURLU **out, char **dir_out)
{
    CURLU *h = NULL;
    char *norm = NULL;
    int rc = 0;

    *out = NULL;
    if (dir_out != NULL) {
        *dir_out = NULL;
    }
    rc = parse(NULL, url, &h);
    if (rc == 0) {
        rc = finish(h, &norm);
    }
    /* Keep the handle at exactly the normal form, re-encoding included
     * (nothing to do when @url was it: a page's own URL). */
    if (rc == 0 && strcmp(norm, url) != 0) {
        rc = from_curlu(curl_url_set(h, CURLUPART_URL, norm, 0));
    }
    if (rc == 0 && dir_out != NULL) {
        *dir_out = url_dir(norm);
    }
    sl_free(norm);
    if (rc != 0) {
        curl_url_cleanup(h);
        return rc;
    }
    *out = h;
    return 0;
}

int
sl__web_url_resolve_h(CURLU *base, const char *href, char **out)
{
    CURLU *h = NULL;
    int rc = 0;

    *out = NULL;
    rc = parse(base, href, &h);
    if (rc == 0) {
        rc = finish(h, out);
    }
    curl_url_cleanup(h);
    return rc;
}

int
sl__web_href_same_document(const char *href)
{
    const char *p = href;

    for (; *p != '\0' && *p != '#'; p++) {
        if ((unsigned char)*p > 0x20) {
            return 0;
        }
    }
    return 1;
}

int
sl_web_url_normalize(const char *url, char **out)
{
    return sl__web_url_resolve_h(NULL, url, out);
}

int
sl_web_url_resolve(const char *base, const char *href, char **out)
{
    CURLU *h = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl__web_url_base(base, &h);
    if (rc == SL_EACCES || rc == SL_ETOOLARGE) {
        rc = SL_EINVAL;
    }
    if (rc == 0) {
        rc = sl__web_url_resolve_h(h, href, out);
    }
    curl_url_cleanup(h);
    return rc;
}

int
sl_web_url_host_key(const char *url, char **out)
{
    CURLU *h = NULL;
    char *norm = NULL;
    char *scheme = NULL;
    char *host = NULL;
    char *port = NULL;
    CURLUcode uc = CURLUE_OK;
    int rc = 0;

    *out = NULL;
    rc = parse(NULL, url, &h);
    if (rc == 0) {
        rc = finish(h, &norm);
    }
    if (rc != 0) {
        goto out;
    }
    uc = curl_url_get(h, CURLUPART_SCHEME, &scheme, 0);
    if (uc == CURLUE_OK) {
        uc = curl_url_get(h, CURLUPART_HOST, &host, 0);
    }
    if (uc == CURLUE_OK) {
        uc = curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    }
    rc = from_curlu(uc);
    if (rc == 0) {
        *out = sl_asprintf("%s://%s:%s", scheme, host, port);
    }
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    sl_free(norm);
    curl_url_cleanup(h);
    return rc;
}

int
sl_web_url_path_query(const char *url, char **out)
{
    char *norm = NULL;
    const char *p = NULL;
    int rc = 0;

    *out = NULL;
    rc = sl_web_url_normalize(url, &norm);
    if (rc != 0) {
        return rc;
    }
    p = strstr(norm, "://");
    p = p != NULL ? strchr(p + 3, '/') : NULL;
    *out = sl_strdup(p != NULL ? p : "/");
    sl_free(norm);
    return 0;
}

/* ------------------------------------------------------------------------
 * Resolution cache.
 * --------------------------------------------------------------------- */

#define CACHE_KEY_MAX 2048 /* longer keys are not cached */

struct sl_web_url_cache {
    json_t *map; /* "<base dir>\n<href>" -> normal form, or an SL_E* code */
    size_t max;
    uint64_t hits;
    uint64_t misses;
};

struct sl_web_url_cache *
sl_web_url_cache_new(size_t max_entries)
{
    struct sl_web_url_cache *c = sl_calloc(1, sizeof(*c));

    c->map = json_object();
    if (c->map == NULL) {
        sl_panic("web: out of memory");
    }
    c->max = max_entries != 0 ? max_entries : 4096;
    return c;
}

void
sl_web_url_cache_free(struct sl_web_url_cache *c)
{
    if (c != NULL) {
        json_decref(c->map);
        sl_free(c);
    }
}

void
sl_web_url_cache_stats(const struct sl_web_url_cache *c,
                       uint64_t *hits,
                       uint64_t *misses)
{
    *hits = c != NULL ? c->hits : 0;
    *misses = c != NULL ? c->misses : 0;
}

/*
 * Whether the result of resolving @href depends on the base only through
 * its directory (RFC 3986 5.2.2): a reference with a scheme, an authority
 * or a non-empty path is merged with the base path up to its last '/'
 * (or ignores it), never with the base's last segment or query.  An empty
 * reference, one that starts with '?' or '#', or one with leading
 * whitespace (trimmed before parsing) is not cached.
 */
static int
dir_only(const char *href)
{
    unsigned char c = (unsigned char)href[0];

    return c > 0x20 && c != '?' && c != '#';
}

int
sl__web_url_resolve_cached(struct sl_web_url_cache *c,
                           const char *dir,
                           CURLU *base,
                           const char *href,
                           char **out)
{
    char key[CACHE_KEY_MAX];
    size_t dlen = dir != NULL ? strlen(dir) : 0;
    size_t hlen = strcspn(href, "#"); /* the fragment never counts */
    const json_t *v = NULL;
    int rc = 0;

    if (c == NULL || dir == NULL || !dir_only(href) ||
        dlen + 1 + hlen >= sizeof(key)) {
        return sl__web_url_resolve_h(base, href, out);
    }
    memcpy(key, dir, dlen);
    key[dlen] = '\n';
    memcpy(key + dlen + 1, href, hlen);
    key[dlen + 1 + hlen] = '\0';
    v = json_object_get(c->map, key);
    if (v != NULL) {
        c->hits++;
        *out = json_is_string(v) ? sl_strdup(json_string_value(v)) : NULL;
        return json_is_string(v) ? 0 : (int)json_integer_value(v);
    }
    c->misses++;
    rc = sl__web_url_resolve_h(base, href, out);
    if (rc == SL_EINTERNAL) {
        return rc; /* out of memory in libcurl: not an answer to keep */
    }
    if (json_object_size(c->map) >= c->max) {
        json_object_clear(c->map);
    }
    (void)json_object_set_new_nocheck(
        c->map,
        key,
        rc == 0 ? json_stringn_nocheck(*out, strlen(*out)) : json_integer(rc));
    return rc;
}
