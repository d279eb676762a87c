/*
 * The S3 backend's XML replies (ListObjectsV2, ListBuckets, errors,
 * CreateMultipartUpload), read with libxml2's xmlTextReader: no tree, no
 * DTD, no entities, no network; elements by local name, so a reply with
 * or without S3's namespace reads the same.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/xmlreader.h>

#include "objectstore/s3_int.h"

#define XML_OPTS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

static xmlTextReaderPtr
reader_new(const char *xml, size_t len)
{
    if (xml == NULL || len == 0 || len > S3_XML_MAX) {
        return NULL;
    }
    return xmlReaderForMemory(xml, (int)len, NULL, NULL, XML_OPTS);
}

/* The local name of the element the reader is on. */
static const char *
local(xmlTextReaderPtr r)
{
    const xmlChar *n = xmlTextReaderConstLocalName(r);

    return n != NULL ? (const char *)n : "";
}

/* The text content of the element the reader is on (new string). */
static char *
text_of(xmlTextReaderPtr r)
{
    xmlChar *t = xmlTextReaderReadString(r);
    char *s = sl_strdup(t != NULL ? (const char *)t : "");

    xmlFree(t);
    return s;
}

char *
sl__s3_xml_text(const char *xml, size_t len, const char *name)
{
    xmlTextReaderPtr r = reader_new(xml, len);
    char *out = NULL;

    while (r != NULL && out == NULL && xmlTextReaderRead(r) == 1) {
        if (xmlTextReaderNodeType(r) == XML_READER_TYPE_ELEMENT &&
            strcmp(local(r), name) == 0) {
            out = text_of(r);
        }
    }
    if (r != NULL) {
        xmlFreeTextReader(r);
    }
    return out;
}

int64_t
sl__s3_iso_ms(const char *s)
{
    struct tm tm;
    const char *rest = NULL;
    long ms = 0;
    time_t t = 0;

    memset(&tm, 0, sizeof(tm));
    rest = s != NULL ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (rest == NULL) {
        return 0;
    }
    if (rest[0] == '.') {
        ms = strtol(rest + 1, NULL, 10);
        while (ms >= 1000) {
            ms /= 10;
        }
    }
    t = timegm(&tm);
    return t > 0 ? (int64_t)t * 1000 + ms : 0;
}

/* One <Contents> element: its Key, Size and LastModified. */
struct entry {
    char *key;
    uint64_t size;
    int64_t mtime;
};

static void
entry_field(xmlTextReaderPtr r, struct entry *e)
{
    const char *n = local(r);
    char *t = NULL;

    if (strcmp(n, "Key") == 0) {
        sl_free(e->key);
        e->key = text_of(r);
    } else if (strcmp(n, "Size") == 0) {
        t = text_of(r);
        (void)sl_parse_u64(t, &e->size);
    } else if (strcmp(n, "LastModified") == 0) {
        t = text_of(r);
        e->mtime = sl__s3_iso_ms(t);
    }
    sl_free(t);
}

/* The reader is on a top-level element of ListBucketResult. */
static int
list_element(xmlTextReaderPtr r,
             struct s3_list_page *p,
             struct entry *e,
             int *in)
{
    const char *n = local(r);
    char *t = NULL;

    if (*in == 1) {
        entry_field(r, e);
        return 0;
    }
    if (*in == 2) {
        if (strcmp(n, "Prefix") == 0 && p->on_prefix != NULL) {
            t = text_of(r);
            p->stopped = p->on_prefix(p->ctx, t);
        }
    } else if (strcmp(n, "Contents") == 0) {
        *in = 1;
    } else if (strcmp(n, "CommonPrefixes") == 0) {
        *in = 2;
    } else if (strcmp(n, "IsTruncated") == 0) {
        t = text_of(r);
        p->truncated = strcmp(t, "true") == 0;
    } else if (strcmp(n, "NextContinuationToken") == 0) {
        sl_free(p->next);
        p->next = text_of(r);
    }
    sl_free(t);
    return 0;
}

int
sl__s3_xml_list(const char *xml, size_t len, struct s3_list_page *p)
{
    xmlTextReaderPtr r = reader_new(xml, len);
    struct entry e = {NULL, 0, 0};
    int in = 0; /* 1: in Contents, 2: in CommonPrefixes */
    int ok = r != NULL;
    int rc = 0;

    p->truncated = 0;
    p->stopped = 0;
    SL_FREE(p->next);
    while (ok && p->stopped == 0 && (rc = xmlTextReaderRead(r)) == 1) {
        int type = xmlTextReaderNodeType(r);

        if (type == XML_READER_TYPE_ELEMENT && xmlTextReaderDepth(r) >= 1) {
            (void)list_element(r, p, &e, &in);
        } else if (type == XML_READER_TYPE_END_ELEMENT &&
                   xmlTextReaderDepth(r) == 1) {
            if (in == 1 && e.key != NULL && p->on_key != NULL) {
                p->stopped = p->on_key(p->ctx, e.key, e.size, e.mtime);
            }
            SL_FREE(e.key);
            e.size = 0;
            e.mtime = 0;
            in = 0;
        }
    }
    sl_free(e.key);
    if (r != NULL) {
        xmlFreeTextReader(r);
    }
    return ok && (rc == 0 || p->stopped != 0) ? 0 : SL_ECORRUPT;
}

int
sl__s3_xml_buckets(const char *xml,
                   size_t len,
                   int (*on_bucket)(void *ctx, const char *name),
                   void *ctx,
                   int *stopped)
{
    xmlTextReaderPtr r = reader_new(xml, len);
    int ok = r != NULL;
    int rc = 0;

    *stopped = 0;
    while (ok && *stopped == 0 && (rc = xmlTextReaderRead(r)) == 1) {
        if (xmlTextReaderNodeType(r) == XML_READER_TYPE_ELEMENT &&
            strcmp(local(r), "Name") == 0 && xmlTextReaderDepth(r) == 3) {
            char *t = text_of(r);

            *stopped = on_bucket(ctx, t);
            sl_free(t);
        }
    }
    if (r != NULL) {
        xmlFreeTextReader(r);
    }
    return ok && (rc == 0 || *stopped != 0) ? 0 : SL_ECORRUPT;
}
