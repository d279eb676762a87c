/*
 * Shared by fuzz_links and fuzz_text: which pages libxml2 2.9.14's HTML
 * push parser reads the same however they are cut into chunks.  The
 * harnesses compare two parses of a page (whole and in chunks, or the
 * textExtractor's and the webCrawler's) only for those; the others are
 * still parsed and checked for everything else.  Include after fuzz.h.
 */
#ifndef SL_TESTS_FUZZ_HTML_H
#define SL_TESTS_FUZZ_HTML_H

#include <strings.h>

/* A character of a tag or attribute name as this check takes it. */
static inline int
sl_fuzz_name_char(uint8_t c)
{
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') ||
           c == ':' || c == '_' || c == '.' || c == '-';
}

/* A character libxml2 2.9.14 starts an attribute name with. */
static inline int
sl_fuzz_name_start(uint8_t c)
{
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == ':' || c == '_' ||
           c == '.';
}

/* The first place of @s (ASCII, any case) in @p's @n bytes from @from on,
 * or @n. */
static inline size_t
sl_fuzz_find(const uint8_t *p, size_t n, size_t from, const char *s)
{
    size_t len = strlen(s);

    for (; from + len <= n; from++) {
        if (strncasecmp((const char *)p + from, s, len) == 0) {
            return from;
        }
    }
    return n;
}

static inline int
sl_fuzz_space_char(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/*
 * Whether a start tag of the page strays from the plain form: a name,
 * then attributes with a plain name and a quoted value, an unquoted one
 * without quotes, or none.  libxml2 2.9.14's push parser counts any quote
 * when it looks for the end of a start tag, parses the tag at a '>' that
 * a quote it does not count so ends, and cuts an attribute value where
 * the input fed so far ends: the links of such a page depend on how it is
 * cut, with libxml2 alone too ('<t" n="><a href=x' then '>' gives
 * n="><a href=x", at once n="><a href=x>"; '<v=".T="><a href=<'), and
 * skips an attribute name that does not start as its names do, quotes and
 * all, up to a space ('<h -n="a b="c><a href="d">x</a>' gives the link d
 * when cut before '<a', none at once).  Such pages are checked for
 * everything but that.
 */
static inline int
sl_fuzz_odd_tags(const uint8_t *p, size_t n)
{
    size_t i = 0;

    while (i < n) {
        if (p[i++] != '<' || i >= n ||
            !((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'z')) {
            continue;
        }
        while (i < n && sl_fuzz_name_char(p[i])) {
            i++;
        }
        while (i < n && p[i] != '>') {
            size_t k = i;

            if (sl_fuzz_space_char(p[i]) || p[i] == '/') {
                i++;
                continue;
            }
            if (!sl_fuzz_name_start(p[i])) {
                return 1; /* libxml2 skips such a name to a space */
            }
            while (i < n && sl_fuzz_name_char(p[i])) {
                i++;
            }
            if (i == k || (i < n && !sl_fuzz_space_char(p[i]) && p[i] != '=' &&
                           p[i] != '>' && p[i] != '/')) {
                return 1; /* no plain attribute name here */
            }
            while (i < n && sl_fuzz_space_char(p[i])) {
                i++;
            }
            if (i >= n || p[i] != '=') {
                continue;
            }
            i++;
            while (i < n && sl_fuzz_space_char(p[i])) {
                i++;
            }
            if (i < n && (p[i] == '"' || p[i] == '\'')) {
                const uint8_t *q = memchr(p + i + 1, p[i], n - i - 1);

                if (q == NULL) {
                    return 1; /* the value runs to the end */
                }
                i = (size_t)(q - p) + 1;
                continue;
            }
            while (i < n && !sl_fuzz_space_char(p[i]) && p[i] != '>') {
                if (p[i] == '"' || p[i] == '\'' || p[i] == '<' || p[i] == '=' ||
                    p[i] == '`') {
                    return 1;
                }
                i++;
            }
        }
    }
    return 0;
}

/*
 * Whether libxml2 reads the page @p (@n bytes, HTTP charset @charset) the
 * same however it is cut, as far as we know: no odd tags, no NUL byte,
 * valid in its charset (ASCII, UTF-8 as UTF-8, any bytes in ISO-8859-1;
 * '<a h=\xe9\xed><a href=\xad\xad<' as UTF-8 gives the link "%C2%AD%3C" at
 * once and "%C2%AD%C2%AD%3C" in chunks of two) and no charset
 * declaration of its own unless the HTTP one wins (a '<meta
 * charset="utf7">' switched mid-parse gave another <base> in chunks),
 * no XML encoding declaration anywhere, no <title> left open, no
 * <script> or <style> that another end tag is met in, no odd
 * markup declaration ('<!*-', '<!-->'), and
 * nothing but white space after </html>.
 */
static inline int
sl_fuzz_plain_page(const uint8_t *p, size_t n, const char *charset)
{
    size_t i = 0;

    if (sl_fuzz_odd_tags(p, n) || memchr(p, 0, n) != NULL) {
        return 0;
    }
    for (i = 0; i < n && p[i] < 0x80; i++) {
    }
    /* ASCII in any charset but UTF-16 (and one iconv knows), UTF-8 read
     * as UTF-8, anything in ISO-8859-1 */
    if (!(i == n &&
          (charset == NULL || strncasecmp(charset, "utf-16", 6) != 0) &&
          (charset == NULL || strcmp(charset, "x-no-such-charset") != 0)) &&
        !(sl_utf8_valid(p, n) &&
          (charset == NULL || strcasecmp(charset, "utf-8") == 0)) &&
        !(charset != NULL && strcasecmp(charset, "iso-8859-1") == 0)) {
        return 0;
    }
    if (charset == NULL && sl_fuzz_find(p, n, 0, "charset") < n) {
        return 0;
    }
    /* a markup declaration other than a comment, a DOCTYPE or CDATA
     * ('<!*- c -->'), or a comment closed at once ('<!-->', '<!--->'):
     * libxml2's push parser ends them where a chunk ends */
    for (i = 0; i + 2 <= n; i++) {
        const char *q = (const char *)p + i + 2;
        size_t left = n - i - 2;

        if (p[i] != '<' || p[i + 1] != '!') {
            continue;
        }
        if (left >= 2 && strncmp(q, "--", 2) == 0) {
            if ((left >= 3 && q[2] == '>') ||
                (left >= 4 && strncmp(q + 2, "->", 2) == 0)) {
                return 0;
            }
        } else if (!(left >= 7 && strncasecmp(q, "doctype", 7) == 0) &&
                   !(left >= 7 && strncmp(q, "[CDATA[", 7) == 0)) {
            return 0;
        }
    }
    /* a <title> never closed runs to the end of the page, and libxml2's
     * push parser ends it where a chunk ends ('<title>...<!--><noscript>'
     * to the end gave two titles as ISO-8859-1) */
    for (i = sl_fuzz_find(p, n, 0, "<title"); i < n;
         i = sl_fuzz_find(p, n, i + 1, "<title")) {
        /* its end tag, and a byte after it */
        if (sl_fuzz_find(p, n - 1, i + 6, "</title") >= n - 1) {
            return 0;
        }
    }
    /* a <script> or <style> whose text holds another end tag ('</title>',
     * '</scr') before its own, or runs to the end: libxml2's push parser
     * ends such text where a chunk ends ('<style>p{}</title>...' to the
     * end, in chunks, gave the text after it) */
    for (i = 0; i + 6 <= n; i++) {
        const char *name = NULL;
        const uint8_t *q = NULL;
        size_t len = 0;

        if (i + 7 <= n && strncasecmp((const char *)p + i, "<script", 7) == 0) {
            name = "script";
        } else if (strncasecmp((const char *)p + i, "<style", 6) == 0) {
            name = "style";
        } else {
            continue;
        }
        len = strlen(name);
        if (i + 1 + len < n && sl_fuzz_name_char(p[i + 1 + len])) {
            continue; /* another element ('<styles>') */
        }
        for (q = p + i + 1 + len; q + 1 < p + n; q++) {
            if (q[0] == '<' && q[1] == '/') {
                break;
            }
        }
        if (q + 1 >= p + n || (size_t)(p + n - q) < 2 + len ||
            strncasecmp((const char *)q + 2, name, len) != 0) {
            return 0;
        }
    }
    /* an XML declaration's encoding, even in the middle of a page and
     * whatever the HTTP charset: libxml2 switches to it where it reads it,
     * and where that is depends on the chunks ('<title>...' then '<?xml
     * version="1.0" @encoding="UTF-0"?>' in a <textarea>, as ISO-8859-1,
     * gave two titles) */
    if (sl_fuzz_find(p, n, 0, "encoding") < n) {
        return 0;
    }
    /* text after </html>: libxml2 takes it or not depending on where the
     * chunks end ("</html>\nre.4\n...4.4\n" lost its last "4.4" in chunks
     * of 11) */
    for (i = 0; i + 7 <= n; i++) {
        if (strncasecmp((const char *)p + i, "</html", 6) == 0) {
            const uint8_t *gt = memchr(p + i, '>', n - i);
            size_t k = gt != NULL ? (size_t)(gt - p) + 1 : n;

            for (; k < n; k++) {
                if (!sl_fuzz_space_char(p[k])) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

#endif /* SL_TESTS_FUZZ_HTML_H */
