/*
 * Private to the walks of text/: the state of a walk and the helpers the
 * archive walk (archive.c) shares with the mail walk (mail.c).
 */
#ifndef SL_TEXT_ARCHIVE_INT_H_INCLUDED
#define SL_TEXT_ARCHIVE_INT_H_INCLUDED

#include "text/text_int.h"

#define READ_BUF (64u * 1024u)

/* The ratio limit applies once this much was expanded, so that small,
 * very compressible archives (a 200-byte zip of 30 KB of text) pass. */
#define RATIO_GRACE (1u << 20)

/* Results of the extraction steps besides 0 (go on) and SL_E* output
 * errors (< 0): the current archive ends, the elements so far are kept. */
enum {
    STEP_STOP = 1,    /* a compound-wide limit was hit (x->stopped) */
    STEP_CORRUPT = 2, /* the archive is corrupt or truncated */
};

/* The limits and the sink of a walk and the state of the current
 * top-level compound. */
struct sl_text_archive {
    const char *who;                    /* for the log, borrowed */
    struct sl_text_archive_names names; /* of the element attributes */
    struct sl_text_archive_limits lim;  /* copied */
    struct sl_text_archive_sink sink;   /* copied */
    struct sl_err *err;                 /* of the current walk */
    char *buf;                          /* READ_BUF bytes */
    const char *top_id;  /* id of the top-level compound, borrowed */
    const char *source;  /* its _source or NULL, borrowed */
    uint64_t compressed; /* size of the top-level compound file */
    uint64_t total;      /* bytes expanded from it so far */
    int stopped;         /* a compound-wide limit was hit */
};

/* Report @n of event @ev, about document @id (NULL: none), to the sink. */
void
sl__text_arc_note(struct sl_text_archive *x, int ev, double n, const char *id);
/* Is @more bytes on top of the expanded total still within maxTotalBytes
 * and maxRatio?  If not, count the limit once and stop the compound. */
int sl__text_arc_budget(struct sl_text_archive *x, uint64_t more);
/* The normal form of inner path @raw (empty, "." and ".." segments and a
 * leading '/' dropped; the last two set *sanitised): a new string. */
char *sl__text_arc_sanitise(const char *raw, int *sanitised);
/* The metadata of element @id (@size bytes, UINT64_MAX: unknown) whose
 * time is @sec.@nsec (@has_time 0: none): a new object or NULL. */
json_t *sl__text_arc_meta(struct sl_text_archive *x,
                          const char *id,
                          uint64_t size,
                          int has_time,
                          int64_t sec,
                          long nsec);
/* Write @meta as a whole record without content. */
int sl__text_arc_write_bare(struct sl_text_archive *x, const json_t *meta);
/* Write @meta with the @len bytes of spool file @fd (read from its
 * current offset) as the content. */
int sl__text_arc_write_spooled(struct sl_text_archive *x,
                               const json_t *meta,
                               int fd,
                               uint64_t len);
/* Walk the archive (or mail) on @fd, elements "@prefix!/...", at nesting
 * @depth: 0, or an SL_E* output error or SL_ECANCELED. */
int sl__text_arc_extract(struct sl_text_archive *x,
                         int fd,
                         const char *prefix,
                         uint64_t depth);

/* mail.c: mailboxes and messages as compounds */
enum { SL__TEXT_MAIL_NONE = 0, SL__TEXT_MAIL_MBOX, SL__TEXT_MAIL_MESSAGE };
/* What the @len bytes @head start: a mailbox, a message or neither. */
int sl__text_mail_kind(const char *head, size_t len);
/* Walk the mailbox or message (@kind) on @fd at nesting @depth: each
 * message of a mailbox an element "@prefix!/<n>" with the message as its
 * content, each attachment an element below its message.  Returns as
 * sl__text_arc_extract. */
int sl__text_mail_walk(struct sl_text_archive *x,
                       int fd,
                       const char *prefix,
                       int kind,
                       uint64_t depth);

/* Read the message spooled in document @d (container.c): its text (the
 * plain text parts, an HTML part where there is no plain one; not the
 * attachments) and its subject as the title.  0. */
int sl__text_mail_read(struct sl_text *x, struct sl_text_doc *d);

#endif /* SL_TEXT_ARCHIVE_INT_H_INCLUDED */
