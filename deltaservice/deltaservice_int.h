/*
 * Internals of the delta service shared by its .c files: the service
 * struct, key and value codecs, LMDB error translation and commit.
 *
 * Primary key (DB "entries" of each shard):
 *   source '\0' id                       when it fits LMDB's key limit
 *   source '\0' id[0..P) SHA-256(id)     otherwise (exactly the limit),
 *                                        the full id is then in the value
 * Compound index key (DB "elements" of the compound's shard), fixed size:
 *   source '\0' SHA-256(compoundId)[0..16) SHA-256(elementId)[0..16)
 *   value: the element id.
 * Visited links (DB "visited" of the URL's shard): the primary key layout
 * with the URL as id (hashed the same way when too long), value the u64
 * run sequence that last visited the URL.
 *
 * Value layout, version 1 (integers little-endian):
 *   0   u8   version (1)
 *   1   u8   flags (SL__DELTA_F_*)
 *   2   u64  visited run sequence
 *   10  u16  hash length H, then H bytes
 *   ..  u32  compound id length C (0: none), then C bytes
 *   ..  u32  id length I, then I bytes       only with SL__DELTA_F_LONGID
 */
#ifndef SL_DELTASERVICE_INT_H_INCLUDED
#define SL_DELTASERVICE_INT_H_INCLUDED

#include <lmdb.h>

#include "deltaservice/deltaservice.h"

#define SL__DELTA_VERSION     1
#define SL__DELTA_F_COMPOUND  0x01u /* the record is a compound */
#define SL__DELTA_F_ELEMENT   0x02u /* has a compound id (index entry) */
#define SL__DELTA_F_LONGID    0x04u /* key is hashed; full id in value */
#define SL__DELTA_VISITED_OFF 2     /* offset of the visited u64 */
#define SL__DELTA_DIGEST      16    /* bytes of a truncated SHA-256 */
#define SL__DELTA_LONG_DIGEST 32    /* full SHA-256 in long-id keys */

struct sl__delta_shard {
    MDB_env *env;     /* the shard's environment */
    MDB_dbi entries;  /* primary: source\0id -> value */
    MDB_dbi elements; /* compound index */
    MDB_dbi visited;  /* visited links: source\0url -> u64 run sequence */
    MDB_dbi recheck;  /* next checks: primary key -> next, interval */
    MDB_dbi due;      /* next checks by time: source\0 next digest -> id */
};

struct sl_delta {
    char *dir;                     /* copy, for messages */
    unsigned nshards;              /* fixed at the first open */
    enum sl_durability durability; /* sync each commit or not */
    uint64_t map_size;             /* per shard, for messages */
    size_t maxkey;                 /* LMDB's key limit (511) */
    MDB_env *meta;                 /* dir/meta */
    MDB_dbi meta_config;           /* "shards" -> u32 */
    MDB_dbi meta_runs;             /* source -> u64 last sequence */
    MDB_dbi meta_purges;           /* source -> u64 ms: purge under way */
    MDB_dbi meta_passes; /* source \0 BE64 ms -> u64 sequence of a run begun
                            then (sl_delta_run_for_at) */
    struct sl__delta_shard *shards; /* nshards, immutable after open */
};

/* A decoded value; pointers borrow the LMDB value they came from. */
struct sl__delta_val {
    unsigned flags;
    uint64_t visited;
    const char *hash;
    size_t hash_len;
    const char *cid; /* NULL when cid_len is 0 */
    size_t cid_len;
    const char *id; /* long ids only, else NULL */
    size_t id_len;
};

/* Fill err from an LMDB return code; shard < 0 names the meta env. */
int sl__delta_lmdb_err(const struct sl_delta *d,
                       struct sl_err *err,
                       int rc,
                       int shard,
                       const char *what);
/* Commit and, in fsync mode, sync; returns an LMDB code. */
int sl__delta_commit(const struct sl_delta *d, MDB_env *env, MDB_txn *txn);
/* 0 or SL_EINVAL with a message for a bad source. */
int sl__delta_check_source(const char *source, struct sl_err *err);

/* Length of the primary key of id (<= d->maxkey). */
size_t sl__delta_key_len(const struct sl_delta *d, size_t slen, size_t idlen);
/* Write the primary key into out (sl__delta_key_len bytes); 1 if long. */
int sl__delta_key(const struct sl_delta *d,
                  const char *source,
                  size_t slen,
                  const char *id,
                  size_t idlen,
                  unsigned char *out);
/* Write the compound index key (slen + 1 + 2 * SL__DELTA_DIGEST bytes);
 * eid NULL writes the prefix only (slen + 1 + SL__DELTA_DIGEST). */
size_t sl__delta_elem_key(const char *source,
                          size_t slen,
                          const char *cid,
                          size_t cidlen,
                          const char *eid,
                          size_t eidlen,
                          unsigned char *out);

/* Remove the next check of primary key @pk (recheck.c), if any, in
 * shard @s's write transaction @txn; an LMDB code. */
int sl__delta_recheck_drop(const struct sl_delta *d,
                           const struct sl__delta_shard *s,
                           MDB_txn *txn,
                           const char *source,
                           const unsigned char *pk,
                           size_t plen);

/* Decode an LMDB value; 0 or SL_ECORRUPT. */
int sl__delta_val_decode(const void *p, size_t n, struct sl__delta_val *v);
/* Encoded size and encoding of v. */
size_t sl__delta_val_size(const struct sl__delta_val *v);
void sl__delta_val_encode(const struct sl__delta_val *v, unsigned char *out);
/* Overwrite the visited sequence of an encoded value. */
void sl__delta_val_set_visited(unsigned char *p, uint64_t seq);

#endif /* SL_DELTASERVICE_INT_H_INCLUDED */
