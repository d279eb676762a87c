/*
 * robots.txt (RFC 9309): a line parser that keeps the rules of the groups
 * for our product token and of the "*" groups apart, then keeps the set
 * that applies, sorted so that the first matching rule is the answer
 * (longest first, Allow before Disallow of the same length).
 *
 * Memory: every array and string here grows with the parsed text, which
 * is cut at SL_WEB_ROBOTS_MAX_BYTES; patterns are at most SL_WEB_URL_MAX
 * bytes after normalisation (longer rules are ignored: no URL we keep can
 * be that long).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "web/web_int.h"

/* Matching steps per sl_web_robots_allowed call; past it, disallowed. */
#define MATCH_BUDGET (4u << 20)

enum mode {
    MODE_RULES = 0,
    MODE_ALLOW_ALL = 1,
    MODE_DISALLOW_ALL = 2,
};

struct rule {
    char *pattern; /* normalised; '*' and a final '$' are special */
    size_t len;    /* bytes of pattern */
    int allow;     /* 1 Allow, 0 Disallow */
};

struct rules {
    struct rule *v;
    size_t n;
    size_t cap;
};

struct sl_web_robots {
    enum mode mode;
    struct rules rules; /* sorted: the first match decides */
    double delay;       /* seconds, -1 when absent */
    char **sitemaps;
    size_t nsitemaps;
    size_t sitemaps_cap;
};

/* State while reading lines. */
struct parser {
    const char *token; /* our product token */
    size_t token_len;
    int in_agents;     /* the previous group line was a user-agent line */
    int cur_mine;      /* the current group names our token */
    int cur_star;      /* the current group names "*" */
    int any_mine;      /* some group names our token */
    struct rules mine; /* rules of the groups naming our token */
    struct rules star; /* rules of the "*" groups */
    double mine_delay; /* first valid Crawl-delay of those groups, or -1 */
    double star_delay;
    struct sl_web_robots *r; /* the result: sitemaps go straight in */
};

static int
is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static void
rules_free(struct rules *rs)
{
    size_t i = 0;

    for (i = 0; i < rs->n; i++) {
        sl_free(rs->v[i].pattern);
    }
    SL_FREE(rs->v);
    rs->n = 0;
    rs->cap = 0;
}

static void
rules_add(struct rules *rs, const char *pattern, size_t len, int allow)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap == 0 ? 16 : rs->cap * 2;
        rs->v = sl_realloc(rs->v, rs->cap * sizeof(rs->v[0]));
    }
    rs->v[rs->n].pattern = sl_strndup(pattern, len);
    rs->v[rs->n].len = len;
    rs->v[rs->n].allow = allow;
    rs->n++;
}

/* Longer patterns first; Allow before Disallow of the same length. */
static int
rule_cmp(const void *a, const void *b)
{
    const struct rule *x = a;
    const struct rule *y = b;

    if (x->len != y->len) {
        return x->len > y->len ? -1 : 1;
    }
    return y->allow - x->allow;
}

/*
 * Whether @p (@pn bytes) matches the start of @s (@sn bytes): '*' matches
 * any run of bytes, a final '$' anchors the pattern at the end of @s.
 * Greedy with a return to the last '*' on a mismatch, which is exact for
 * patterns whose only wildcard is '*' and needs no memory.  Each step
 * costs one of *@budget; -1 when it runs out (pathological rules can
 * take pattern length times path length steps).
 */
static int
pattern_match(
    const char *p, size_t pn, const char *s, size_t sn, size_t *budget)
{
    int anchored = pn > 0 && p[pn - 1] == '$';
    size_t i = 0;
    size_t j = 0;
    size_t star = SIZE_MAX; /* pattern position after the last '*' */
    size_t star_j = 0;      /* where that '*' started matching in s */

    if (anchored) {
        pn--;
    }
    while (j < sn) {
        if (*budget == 0) {
            return -1;
        }
        (*budget)--;
        if (i == pn && !anchored) {
            return 1;
        }
        if (i < pn && p[i] == '*') {
            star = ++i;
            star_j = j;
        } else if (i < pn && p[i] == s[j]) {
            i++;
            j++;
        } else if (star != SIZE_MAX) {
            i = star;
            j = ++star_j;
        } else {
            return 0;
        }
    }
    while (i < pn && p[i] == '*') {
        i++;
    }
    return i == pn;
}

/* The product token of a user-agent: the bytes before the first '/' or
 * white space. */
static size_t
token_len(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n && s[i] != '/' && !is_space((unsigned char)s[i])) {
        i++;
    }
    return i;
}

static void
on_agent(struct parser *ps, const char *v, size_t n)
{
    size_t k = token_len(v, n);

    if (!ps->in_agents) {
        ps->cur_mine = 0;
        ps->cur_star = 0;
        ps->in_agents = 1;
    }
    if (k == 1 && v[0] == '*') {
        ps->cur_star = 1;
    } else if (k == ps->token_len && strncasecmp(v, ps->token, k) == 0) {
        ps->cur_mine = 1;
        ps->any_mine = 1;
    }
}

static void
on_rule(struct parser *ps, const char *v, size_t n, int allow)
{
    struct sl_buf b;

    ps->in_agents = 0;
    if (n == 0 || (!ps->cur_mine && !ps->cur_star)) {
        return;
    }
    sl_buf_init(&b, SL_WEB_URL_MAX);
    if (sl__web_pct_append(&b, v, n, 1) == 0) {
        if (ps->cur_mine) {
            rules_add(&ps->mine, b.data, b.len, allow);
        }
        if (ps->cur_star) {
            rules_add(&ps->star, b.data, b.len, allow);
        }
    }
    sl_buf_free(&b);
}

/* Crawl-delay: a finite number of seconds >= 0; anything else is ignored. */
static void
on_delay(struct parser *ps, const char *v, size_t n)
{
    char num[64];
    char *end = NULL;
    double d = 0;

    ps->in_agents = 0;
    if (n == 0 || n >= sizeof(num)) {
        return;
    }
    memcpy(num, v, n);
    num[n] = '\0';
    d = strtod(num, &end);
    if (end != num + n || !isfinite(d) || d < 0) {
        return;
    }
    if (ps->cur_mine && ps->mine_delay < 0) {
        ps->mine_delay = d;
    }
    if (ps->cur_star && ps->star_delay < 0) {
        ps->star_delay = d;
    }
}

static void
on_sitemap(struct parser *ps, const char *v, size_t n)
{
    struct sl_web_robots *r = ps->r;

    if (n == 0 || r->nsitemaps >= SL_WEB_ROBOTS_MAX_SITEMAPS) {
        return;
    }
    if (r->nsitemaps == r->sitemaps_cap) {
        r->sitemaps_cap = r->sitemaps_cap == 0 ? 4 : r->sitemaps_cap * 2;
        r->sitemaps =
            sl_realloc(r->sitemaps, r->sitemaps_cap * sizeof(r->sitemaps[0]));
    }
    r->sitemaps[r->nsitemaps++] = sl_strndup(v, n);
}

/* Is @k (@n bytes) the key or directive @name, without case? */
static int
key_is(const char *k, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(k, name, n) == 0;
}

/* Trim white space around @p (@n bytes) in place. */
static void
trim(const char **p, size_t *n)
{
    while (*n > 0 && is_space((unsigned char)**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && is_space((unsigned char)(*p)[*n - 1])) {
        (*n)--;
    }
}

/* One line without its end: "key: value # comment". */
static void
parse_line(struct parser *ps, const char *line, size_t n)
{
    const char *hash = memchr(line, '#', n);
    const char *colon = NULL;
    const char *k = line;
    const char *v = NULL;
    size_t kn = 0;
    size_t vn = 0;

    if (hash != NULL) {
        n = (size_t)(hash - line);
    }
    colon = memchr(line, ':', n);
    if (colon == NULL) {
        return;
    }
    kn = (size_t)(colon - line);
    v = colon + 1;
    vn = n - kn - 1;
    trim(&k, &kn);
    trim(&v, &vn);
    if (key_is(k, kn, "user-agent")) {
        on_agent(ps, v, vn);
    } else if (key_is(k, kn, "allow")) {
        on_rule(ps, v, vn, 1);
    } else if (key_is(k, kn, "disallow")) {
        on_rule(ps, v, vn, 0);
    } else if (key_is(k, kn, "crawl-delay")) {
        on_delay(ps, v, vn);
    } else if (key_is(k, kn, "sitemap")) {
        on_sitemap(ps, v, vn);
    }
}

static int
line_end(char c)
{
    return c == '\n' || c == '\r' || c == '\0';
}

static struct sl_web_robots *
robots_new(enum mode mode)
{
    struct sl_web_robots *r = sl_calloc(1, sizeof(*r));

    r->mode = mode;
    r->delay = -1;
    return r;
}

int
sl_web_robots_parse(const char *text,
                    size_t len,
                    const char *user_agent,
                    struct sl_web_robots **out)
{
    struct parser ps;
    const char *p = NULL;
    const char *end = NULL;

    *out = NULL;
    memset(&ps, 0, sizeof(ps));
    ps.token = user_agent != NULL ? user_agent : "";
    ps.token_len = token_len(ps.token, strlen(ps.token));
    if (ps.token_len == 0) {
        return SL_EINVAL;
    }
    ps.mine_delay = -1;
    ps.star_delay = -1;
    ps.r = robots_new(MODE_RULES);
    if (text == NULL) {
        text = ""; /* no offset is added to a null pointer below */
        len = 0;
    }
    /* RFC 9309 2.5: read the first 500 KiB; a line cut there is dropped,
     * a partial rule could mean something else. */
    if (len > SL_WEB_ROBOTS_MAX_BYTES) {
        len = SL_WEB_ROBOTS_MAX_BYTES;
        while (len > 0 && !line_end(text[len])) {
            len--;
        }
    }
    p = text;
    end = text + len;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        p += 3;
    }
    while (p < end) {
        const char *e = p;

        while (e < end && !line_end(*e)) {
            e++;
        }
        parse_line(&ps, p, (size_t)(e - p));
        p = e + 1;
    }
    if (ps.any_mine) {
        ps.r->rules = ps.mine;
        ps.r->delay = ps.mine_delay;
        rules_free(&ps.star);
    } else {
        ps.r->rules = ps.star;
        ps.r->delay = ps.star_delay;
        rules_free(&ps.mine);
    }
    if (ps.r->rules.n > 1) {
        qsort(ps.r->rules.v, ps.r->rules.n, sizeof(ps.r->rules.v[0]), rule_cmp);
    }
    *out = ps.r;
    return 0;
}

struct sl_web_robots *
sl_web_robots_new_allow_all(void)
{
    return robots_new(MODE_ALLOW_ALL);
}

struct sl_web_robots *
sl_web_robots_new_disallow_all(void)
{
    return robots_new(MODE_DISALLOW_ALL);
}

void
sl_web_robots_free(struct sl_web_robots *r)
{
    size_t i = 0;

    if (r == NULL) {
        return;
    }
    rules_free(&r->rules);
    for (i = 0; i < r->nsitemaps; i++) {
        sl_free(r->sitemaps[i]);
    }
    sl_free(r->sitemaps);
    sl_free(r);
}

/* "/robots.txt" itself, with or without a query. */
static int
is_robots_txt(const char *pq)
{
    static const char name[] = "/robots.txt";

    return strncmp(pq, name, sizeof(name) - 1) == 0 &&
           (pq[sizeof(name) - 1] == '\0' || pq[sizeof(name) - 1] == '?');
}

int
sl_web_robots_allowed(const struct sl_web_robots *r, const char *pq)
{
    struct sl_buf b;
    size_t budget = MATCH_BUDGET;
    size_t n = 0;
    size_t i = 0;
    int allowed = 1;

    if (pq == NULL || pq[0] == '\0') {
        pq = "/";
    }
    if (is_robots_txt(pq) || r->mode == MODE_ALLOW_ALL) {
        return 1;
    }
    if (r->mode == MODE_DISALLOW_ALL) {
        return 0;
    }
    if (r->rules.n == 0) {
        return 1;
    }
    n = strlen(pq);
    sl_buf_init(&b, 3 * n);
    if (sl__web_pct_append(&b, pq, n, 1) != 0 || SL_NEVER(b.data == NULL)) {
        sl_buf_free(&b);
        return 1;
    }
    for (i = 0; i < r->rules.n; i++) {
        const struct rule *ru = &r->rules.v[i];
        int m = pattern_match(ru->pattern, ru->len, b.data, b.len, &budget);

        if (m != 0) {
            allowed = m > 0 ? ru->allow : 0;
            break;
        }
    }
    sl_buf_free(&b);
    return allowed;
}

double
sl_web_robots_crawl_delay(const struct sl_web_robots *r)
{
    return r->delay;
}

size_t
sl_web_robots_sitemap_count(const struct sl_web_robots *r)
{
    return r->nsitemaps;
}

const char *
sl_web_robots_sitemap(const struct sl_web_robots *r, size_t i)
{
    return i < r->nsitemaps ? r->sitemaps[i] : NULL;
}

/* ------------------------------------------------------------------------
 * X-Robots-Tag.
 * --------------------------------------------------------------------- */

unsigned
sl_web_robots_tag(const char *value, const char *user_agent)
{
    const char *ua = user_agent != NULL ? user_agent : "";
    size_t ua_len = token_len(ua, strlen(ua));
    const char *p = value != NULL ? value : "";
    unsigned flags = 0;
    int mine = 1; /* the items so far apply to every crawler */

    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        const char *item = p;
        const char *colon = memchr(item, ':', n);

        p = end != NULL ? end + 1 : p + n;
        if (colon != NULL) {
            const char *name = item;
            size_t k = (size_t)(colon - item);

            trim(&name, &k);
            if (key_is(name, k, "unavailable_after") ||
                key_is(name, k, "max-snippet") ||
                key_is(name, k, "max-image-preview") ||
                key_is(name, k, "max-video-preview")) {
                continue; /* a directive with a value */
            }
            /* "<agent>: ...": this item and the next are for <agent> */
            k = token_len(name, k);
            mine = ua_len > 0 && k == ua_len && strncasecmp(name, ua, k) == 0;
            n -= (size_t)(colon + 1 - item);
            item = colon + 1;
        }
        trim(&item, &n);
        if (!mine) {
            continue;
        }
        if (key_is(item, n, "noindex")) {
            flags |= SL_WEB_NOINDEX;
        } else if (key_is(item, n, "nofollow")) {
            flags |= SL_WEB_NOFOLLOW;
        } else if (key_is(item, n, "none")) {
            flags |= SL_WEB_NOINDEX | SL_WEB_NOFOLLOW;
        }
    }
    return flags;
}
