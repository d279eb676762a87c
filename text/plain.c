/*
 * Charsets and plain text: a byte order mark, the HTTP header's charset
 * or libuchardet's guess, converted to UTF-8 with iconv.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "text/text_int.h"

/* ------------------------------------------------------------------------
 * Charsets and plain text.
 * --------------------------------------------------------------------- */

/* Upper-case copy of @in into @out (SL_TEXT_CHARSET_MAX bytes). */
void
sl__text_charset_copy(char *out, const char *in)
{
    size_t i = 0;

    for (i = 0; in[i] != '\0' && i + 1 < SL_TEXT_CHARSET_MAX; i++) {
        char c = in[i];

        out[i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    out[i] = '\0';
}

/* The charset of a byte order mark at the start of @head, or NULL. */
const char *
sl__text_charset_bom(const char *head, size_t len)
{
    const unsigned char *p = (const unsigned char *)head;

    if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
        return "UTF-8";
    }
    if (len >= 2 &&
        ((p[0] == 0xff && p[1] == 0xfe) || (p[0] == 0xfe && p[1] == 0xff))) {
        return "UTF-16";
    }
    return NULL;
}

/*
 * The charset of content starting with @len bytes @head, into @out: a
 * byte order mark, else UTF-8 when the head is valid UTF-8 (ASCII
 * included; uchardet sometimes names a single-byte charset for short
 * UTF-8 text), else libuchardet's answer, else WINDOWS-1252.
 */
void
sl__text_charset_detect(uchardet_t *ud, const char *head, size_t len, char *out)
{
    const char *bom = sl__text_charset_bom(head, len);
    const char *cs = NULL;

    if (bom != NULL) {
        sl__text_charset_copy(out, bom);
        return;
    }
    if (sl_utf8_valid_head(head, len)) { /* may end inside a sequence */
        sl__text_charset_copy(out, "UTF-8");
        return;
    }
    if (*ud == NULL) {
        *ud = uchardet_new();
    }
    if (*ud != NULL) {
        uchardet_reset(*ud);
        if (uchardet_handle_data(*ud, head, len) == 0) {
            uchardet_data_end(*ud);
            cs = uchardet_get_charset(*ud);
        }
    }
    sl__text_charset_copy(out,
                          cs != NULL && cs[0] != '\0' &&
                                  strcmp(cs, "ASCII") != 0
                              ? cs
                              : "WINDOWS-1252");
}

/* Start plain text: the charset of a byte order mark, else of the HTTP
 * header when iconv knows it, else detected; iconv is opened unless it is
 * UTF-8 (passed through, checked by the text). */
void
sl__text_plain_begin(struct sl_text *x,
                     struct sl_text_doc *d,
                     const char *head,
                     size_t len)
{
    if (sl__text_charset_bom(head, len) == NULL && d->given != NULL &&
        d->given[0] != '\0') {
        sl__text_charset_copy(d->charset, d->given);
        if (strcmp(d->charset, "UTF-8") == 0) {
            return;
        }
        d->cd = iconv_open("UTF-8", d->charset);
        if (d->cd != (iconv_t)-1) {
            return;
        }
    }
    sl__text_charset_detect(&x->ud, head, len, d->charset);
    if (strcmp(d->charset, "UTF-8") == 0) {
        return;
    }
    d->cd = iconv_open("UTF-8", d->charset);
    if (d->cd == (iconv_t)-1) {
        SL_DEBUG("textExtractor: iconv cannot convert from %s; read as "
                 "UTF-8",
                 d->charset);
        d->charset[0] = '\0';
    }
}

/* Convert the staged input @in (@left bytes) with iconv into the text.
 * Invalid input bytes become U+FFFD; an incomplete sequence at the end
 * is carried to the next call unless @final. */
static void
plain_convert(
    struct sl_text *x, struct sl_text_doc *d, char *in, size_t left, int final)
{
    while (left > 0 && !d->text.full) {
        char *out = x->obuf;
        size_t room = SL_TEXT_CHUNK;
        size_t r = iconv(d->cd, &in, &left, &out, &room);
        int e = errno;

        sl__text_buf_bytes(&d->text, x->obuf, SL_TEXT_CHUNK - room);
        if (r != (size_t)-1 || e == E2BIG) {
            continue;
        }
        if (e == EINVAL && !final && left <= CARRY_MAX) {
            memcpy(d->carry, in, left);
            d->clen = left;
            return;
        }
        sl__text_buf_char(&d->text,
                          SL__TEXT_REPLACEMENT,
                          sizeof(SL__TEXT_REPLACEMENT),
                          0xfffd);
        in++;
        left--;
    }
    if (final) {
        char *out = x->obuf;
        size_t room = SL_TEXT_CHUNK;

        (void)iconv(d->cd, NULL, NULL, &out, &room);
        sl__text_buf_bytes(&d->text, x->obuf, SL_TEXT_CHUNK - room);
    }
}

/* Feed @n bytes of plain text. */
int
sl__text_plain_feed(struct sl_text *x,
                    struct sl_text_doc *d,
                    const char *p,
                    size_t n)
{
    if (d->cd == (iconv_t)-1) {
        sl__text_buf_bytes(&d->text, p, n);
        return d->text.full ? SL_TEXT_STOP : 0;
    }
    while (n > 0 && !d->text.full) {
        size_t k = n < SL_TEXT_CHUNK ? n : SL_TEXT_CHUNK;
        size_t c = d->clen;

        memcpy(x->stage, d->carry, c);
        memcpy(x->stage + c, p, k);
        d->clen = 0;
        p += k;
        n -= k;
        plain_convert(x, d, x->stage, c + k, 0);
    }
    return d->text.full ? SL_TEXT_STOP : 0;
}

void
sl__text_plain_end(struct sl_text *x, struct sl_text_doc *d)
{
    if (d->cd != (iconv_t)-1) {
        memcpy(x->stage, d->carry, d->clen);
        plain_convert(x, d, x->stage, d->clen, 1);
        d->clen = 0;
        (void)iconv_close(d->cd);
        d->cd = (iconv_t)-1;
    }
}
