/*
 * The text of a document: valid UTF-8, capped, cut between characters,
 * optionally with white space collapsed (text_int.h, struct sl__text_buf).
 */
#include <string.h>

#include "text/text_int.h"

/* ------------------------------------------------------------------------
 * Text.
 * --------------------------------------------------------------------- */

void
sl__text_buf_init(struct sl__text_buf *t, size_t max, int collapse)
{
    memset(t, 0, sizeof(*t));
    sl_buf_init(&t->b, max);
    t->max = max;
    t->collapse = collapse;
}

/* Drop everything (a failed converter's partial output). */
void
sl__text_buf_clear(struct sl__text_buf *t)
{
    sl_buf_free(&t->b);
    sl__text_buf_init(t, t->max, t->collapse);
}

void
sl__text_buf_break(struct sl__text_buf *t, int sep)
{
    if (t->sep < sep) {
        t->sep = sep;
    }
}

static int
is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0xa0;
}

/*
 * Append one valid character @s (@len bytes, code point @cp), or drop it:
 * NUL, DEL and C0 controls other than tab, line feed and carriage return
 * (form and line feeds become line feeds), and a byte order mark at the
 * start.  A character that does not fit any more fills the text.
 */
void
sl__text_buf_char(struct sl__text_buf *t,
                  const unsigned char *s,
                  size_t len,
                  uint32_t cp)
{
    const char *sep = NULL;
    size_t need = len;

    if (t->full || cp == 0 || cp == 0x7f || (cp == 0xfeff && t->b.len == 0)) {
        return;
    }
    if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') {
        if (cp != '\f' && cp != '\v') {
            return;
        }
        cp = '\n';
        s = (const unsigned char *)"\n";
    }
    if (t->collapse && is_space(cp)) {
        sl__text_buf_break(t, SEP_SPACE);
        return;
    }
    if (t->sep != SEP_NONE && t->b.len > 0) {
        sep = t->sep == SEP_LINE ? "\n" : " ";
        need++;
    }
    if (need > t->max - t->b.len) {
        t->full = 1;
        return;
    }
    t->sep = SEP_NONE;
    if (sep != NULL) {
        (void)sl_buf_append(&t->b, sep, 1);
    }
    (void)sl_buf_append(&t->b, s, len);
}

#define BYTES_01 UINT64_C(0x0101010101010101)
#define BYTES_7F UINT64_C(0x7f7f7f7f7f7f7f7f)
#define BYTES_80 UINT64_C(0x8080808080808080)

/* The high bit of each byte of @w that is zero (exact: no carry crosses a
 * byte). */
static uint64_t
zero_bytes(uint64_t w)
{
    return ~(((w & BYTES_7F) + BYTES_7F) | w | BYTES_7F);
}

/* The high bit of each byte of @w that is 0x21..0x7e (printable ASCII). */
static uint64_t
printable_bytes(uint64_t w)
{
    uint64_t b = w | BYTES_80; /* each byte >= 0x80: no borrow between them */

    return ~w & (b - 0x21 * BYTES_01) & ~(b - 0x7f * BYTES_01) & BYTES_80;
}

static int
printable(unsigned char c)
{
    return c > 0x20 && c < 0x7f;
}

/* Length of the run at @p (@n bytes) of printable ASCII and, outside
 * collapse mode, ASCII white space: bytes that are copied as they are.
 * In collapse mode a single space between two printable characters is
 * part of the run too: it is what collapsing would write, and prose then
 * goes in one append instead of two per word.
 *
 * Eight bytes at a time (byte k of the little-endian word is p[i + k]):
 * a space's neighbours are the words' flags shifted by one byte; the
 * one before the word is in the run (i > 0: p[i - 1] was taken, and a
 * space is taken only before a printable byte), the one after is
 * p[i + 8].  A third of the time of the byte loop on prose. */
static size_t
ascii_run(const struct sl__text_buf *t, const unsigned char *p, size_t n)
{
    size_t i = 0;

    while (n - i >= sizeof(uint64_t)) {
        uint64_t w = sl_le_get64(p + i);
        uint64_t pr = printable_bytes(w);
        uint64_t sp = zero_bytes(w ^ (0x20 * BYTES_01));
        uint64_t ok = 0;
        uint64_t bad = 0;

        if (t->collapse) {
            uint64_t before = (pr << 8) | (i > 0 ? 0x80u : 0u);
            uint64_t after = (pr >> 8);

            if (i + 8 < n && printable(p[i + 8])) {
                after |= UINT64_C(0x80) << 56;
            }
            ok = pr | (sp & before & after);
        } else {
            ok = pr | sp | zero_bytes(w ^ (0x09 * BYTES_01)) |
                 zero_bytes(w ^ (0x0a * BYTES_01)) |
                 zero_bytes(w ^ (0x0d * BYTES_01));
        }
        bad = ~ok & BYTES_80;
        if (bad != 0) {
            for (; (bad & 0x80u) == 0; bad >>= 8) {
                i++;
            }
            return i;
        }
        i += sizeof(uint64_t);
    }
    for (; i < n; i++) {
        unsigned char c = p[i];

        if (printable(c)) {
            continue;
        }
        if (!t->collapse && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            continue;
        }
        if (c == ' ' && i > 0 && i + 1 < n && printable(p[i + 1])) {
            continue; /* p[i - 1] is printable: no two spaces in a run */
        }
        break;
    }
    return i;
}

/* Append the @len bytes of such a run at once (the common case), or as
 * many as fit: every ASCII byte is a character boundary. */
static void
text_run(struct sl__text_buf *t, const unsigned char *s, size_t len)
{
    size_t room = t->max - t->b.len;

    if (t->full) {
        return;
    }
    if (t->sep != SEP_NONE && t->b.len > 0) {
        if (room < 2) {
            t->full = 1;
            return;
        }
        (void)sl_buf_append(&t->b, t->sep == SEP_LINE ? "\n" : " ", 1);
        room--;
    }
    t->sep = SEP_NONE;
    if (len > room) {
        len = room;
        t->full = 1;
        while (t->collapse && len > 0 && s[len - 1] == ' ') {
            len--; /* a collapsed space is never written last */
        }
    }
    (void)sl_buf_append(&t->b, s, len);
}

/*
 * Append @n bytes of supposed UTF-8 @data.  A sequence split between two
 * calls is completed from the next call; invalid bytes become U+FFFD one
 * by one.
 */
void
sl__text_buf_bytes(struct sl__text_buf *t, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t cp = 0;
    int len = 0;

    while (t->plen > 0 && n > 0 && !t->full) {
        unsigned char rest[4];
        size_t k = 0;

        t->part[t->plen++] = *p++;
        n--;
        len = sl_utf8_decode(t->part, t->plen, &cp);
        if (len < 0) {
            continue;
        }
        k = t->plen;
        memcpy(rest, t->part, k);
        t->plen = 0;
        if (len > 0) {
            sl__text_buf_char(t, rest, k, cp);
        } else {
            sl__text_buf_char(
                t, SL__TEXT_REPLACEMENT, sizeof(SL__TEXT_REPLACEMENT), 0xfffd);
            sl__text_buf_bytes(t, rest + 1, k - 1);
        }
    }
    while (n > 0 && !t->full) {
        size_t run = ascii_run(t, p, n);

        if (run > 0) {
            text_run(t, p, run);
            p += run;
            n -= run;
            continue;
        }
        len = sl_utf8_decode(p, n, &cp);
        if (len < 0) {
            memcpy(t->part, p, n);
            t->plen = n;
            return;
        }
        if (len == 0) {
            sl__text_buf_char(
                t, SL__TEXT_REPLACEMENT, sizeof(SL__TEXT_REPLACEMENT), 0xfffd);
            p++;
            n--;
            continue;
        }
        sl__text_buf_char(t, p, (size_t)len, cp);
        p += len;
        n -= (size_t)len;
    }
}

/* The input ended: an incomplete sequence becomes U+FFFD. */
void
sl__text_buf_end(struct sl__text_buf *t)
{
    if (t->plen > 0) {
        t->plen = 0;
        sl__text_buf_char(
            t, SL__TEXT_REPLACEMENT, sizeof(SL__TEXT_REPLACEMENT), 0xfffd);
    }
}

/* Make @t a collapsed text of at most @max bytes holding @s (NULL: none);
 * what it held is freed. */
void
sl__text_buf_set(struct sl__text_buf *t, size_t max, const char *s)
{
    sl_buf_free(&t->b);
    sl__text_buf_init(t, max, 1);
    if (s != NULL) {
        sl__text_buf_bytes(t, s, strlen(s));
    }
}
