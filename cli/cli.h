/*
 * The sluice command line: one entry point per sub-command, and the server
 * configuration (config/sluice.json) shared by them.  Each entry point
 * takes the sub-command's argv (argv[0] is the sub-command name) and
 * returns the process exit status (0 success, 1 failure, 2 usage error).
 */
#ifndef SL_CLI_H_INCLUDED
#define SL_CLI_H_INCLUDED

#include <stdint.h>
#include <stdio.h>

#include "core/sl.h"

struct sl_worker_type;

/**
 * @brief The whole command line: dispatch argv[1] to a sub-command.
 * @return the process exit status.
 */
int sl_cli_main(int argc, char **argv);
/**
 * @brief Worker types to offer besides the built-in ones (sluice-test adds
 * its test workers); call before sl_cli_main.
 * @param[in] types borrowed; must stay valid for the process lifetime.
 */
void sl_cli_set_extra_workers(const struct sl_worker_type *const *types,
                              size_t n);
/**
 * @brief The built-in plus the extra worker types.
 * @return borrowed array, valid for the process lifetime.
 */
const struct sl_worker_type *const *sl_cli_worker_types(size_t *n);

/** @brief `sluice serve`: run the server until SIGINT/SIGTERM. */
int sl_cli_serve_main(int argc, char **argv);
/** @brief `sluice bulk cat|count|from-jsonl`: inspect and build bulks. */
int sl_cli_bulk_main(int argc, char **argv);
/** @brief `sluice worker`: take and perform tasks of one worker type from
 * a server until SIGINT/SIGTERM. */
int sl_cli_worker_main(int argc, char **argv);
/** @brief `sluice search`: query an index of a running server and print
 * the hits. */
int sl_cli_search_main(int argc, char **argv);
/** `sluice source`: purge a data source, or show its delta entries. */
int sl_cli_source_main(int argc, char **argv);

/** @brief `sluice job`: start a job and follow its run, or show its
 * state. */
int sl_cli_job_main(int argc, char **argv);

struct sl_cli_conn;
/** @brief `sluice workflow list|define|delete` (cmd_defs.c). */
int sl_cli_workflow_main(int argc, char **argv);
/** @brief `sluice index list|delete` (cmd_defs.c). */
int sl_cli_index_main(int argc, char **argv);
/**
 * @brief The definitions of @p kind ("jobs", "workflows") one a line, with
 * the runs of jobs; @p json: as the server lists them (cmd_defs.c).
 * Errors are printed with @p prog.  0 or 1.
 */
int sl_cli_defs_list(const struct sl_cli_conn *conn,
                     const char *prog,
                     const char *kind,
                     int json);
/** @brief POST the definition in JSON file @p file.  0 or 1. */
int sl_cli_defs_define(const struct sl_cli_conn *conn,
                       const char *prog,
                       const char *kind,
                       const char *file);
/** @brief DELETE definition @p name (a job's documents too with
 * @p purge).  0 or 1. */
int sl_cli_defs_delete(const struct sl_cli_conn *conn,
                       const char *prog,
                       const char *kind,
                       const char *name,
                       int purge);
/**
 * @brief `sluice job report` (cmd_report.c): the counts by state of run
 * @p run (NULL: the current or last one) of @p job and its recorded
 * documents, of @p state only unless NULL; @p json: JSON lines.
 * @return 0, or 1 with the reason printed.
 */
int sl_cli_job_report(const struct sl_cli_conn *conn,
                      const char *job,
                      const char *run,
                      const char *state,
                      int json);

/* HTTP client of the CLI commands (http_client.c). */
#define SL_CLI_MAX_REPLY      (16u << 20)
#define SL_CLI_DEFAULT_SERVER "http://127.0.0.1:8080"

/*
 * The server a client command talks to: --server URL or $SLUICE_SERVER,
 * and --token TOKEN or $SLUICE_TOKEN (the environment keeps the token out
 * of the process list).  The strings are borrowed from argv or environ.
 */
struct sl_cli_conn {
    const char *server; /* NULL when none was given and there is no default */
    const char *token;  /* NULL: no Authorization header */
};
/* The two rows of a command's getopt_long table. */
#define SL_CLI_CONN_OPTIONS                                                    \
    {"server", required_argument, NULL, 's'},                                  \
    {                                                                          \
        "token", required_argument, NULL, 'T'                                  \
    }
/** @brief Print the help lines of the two options; @p dflt is the server
 * used without --server and $SLUICE_SERVER, or NULL for none. */
void sl_cli_conn_help(FILE *out, const char *dflt);
/**
 * @brief Start @p c from the environment, @p dflt (may be NULL) when
 * $SLUICE_SERVER is unset or empty.
 */
void sl_cli_conn_init(struct sl_cli_conn *c, const char *dflt);
/**
 * @brief Take option @p opt ('s' or 'T', from SL_CLI_CONN_OPTIONS) with
 * argument @p arg.
 * @return 1 when it was one of them, else 0.
 */
int sl_cli_conn_option(struct sl_cli_conn *c, int opt, const char *arg);
/**
 * @brief One request; the reply lands in @p reply (bounded by its limit),
 * the HTTP status in *status.  @p body (JSON text) may be NULL.
 * @return 0, or 1 with the reason printed on stderr prefixed by @p prog.
 */
int sl_cli_http(const char *prog,
                const char *method,
                const char *url,
                const char *token,
                const char *body,
                struct sl_buf *reply,
                long *status);
/** @brief 1 when a request of this process could not reach its server
 * (no connection, name not resolved, timed out): the commands then exit
 * with SL_CLI_EXIT_UNREACHABLE instead of 1. */
int sl_cli_unreachable(void);
#define SL_CLI_EXIT_UNREACHABLE 3
/** @brief As sl_cli_http, parsed: a new JSON value or NULL (printed). */
json_t *sl_cli_http_json(const char *prog,
                         const char *method,
                         const char *url,
                         const char *token,
                         const char *body,
                         long *status);
/**
 * @brief @p method @p path (relative to @p conn's server) with JSON text
 * @p body (or NULL): the reply in *out (new reference) when the status is
 * 2xx; otherwise the reason is printed, prefixed by @p prog.  0 or 1.
 */
int sl_cli_call(const struct sl_cli_conn *conn,
                const char *prog,
                const char *method,
                const char *path,
                const char *body,
                json_t **out);
/** @brief Print an API error reply ({"error": {"message"}}) on stderr. */
void sl_cli_print_error(const char *prog, long status, const json_t *reply);
/** @brief @p server without trailing slashes + @p path; caller frees. */
char *sl_cli_url(const char *server, const char *path);

/** Server configuration; see docs/configuration.md for every key. */
struct sl_obj;

struct sl_cfg {
    char listen[256];               /* listen */
    char data_dir[4096];            /* dataDir */
    char durability[16];            /* durability: "process" | "fsync" */
    char api_token[256];            /* apiToken */
    char log_level[16];             /* log.level */
    uint64_t http_threads;          /* http.threads */
    uint64_t max_connections;       /* http.maxConnections */
    uint64_t max_conn_per_ip;       /* http.maxConnectionsPerIp */
    uint64_t max_body_bytes;        /* http.maxBodyBytes */
    uint64_t max_header_bytes;      /* http.maxHeaderBytes */
    uint64_t request_timeout;       /* http.requestTimeoutSeconds */
    uint64_t http_metrics;          /* http.metrics: 1 on, 0 off */
    uint64_t shutdown_grace;        /* http.shutdownGraceSeconds */
    uint64_t max_object_bytes;      /* store.maxObjectBytes */
    char jm_config_dir[4096];       /* jobmanager.configDir */
    char jm_workflows_dir[4096];    /* jobmanager.workflowsDir */
    uint64_t lease_seconds;         /* jobmanager.leaseSeconds */
    uint64_t max_retries;           /* jobmanager.maxRetries */
    uint64_t max_in_progress;       /* jobmanager.maxInProgress */
    uint64_t max_queued_downstream; /* jobmanager.maxQueuedDownstream */
    uint64_t max_errors;            /* jobmanager.maxErrors */
    uint64_t nospace_first_ms;      /* jobmanager.noSpaceDelayMs */
    uint64_t nospace_max_ms;        /* jobmanager.noSpaceMaxDelayMs */
    uint64_t hist_max_per_run;      /* jobmanager.history.maxEntriesPerRun */
    uint64_t hist_keep_runs;        /* jobmanager.history.keepRuns */
    uint64_t hist_max_days;         /* jobmanager.history.maxAgeDays */
    char worker_limits[4096];       /* jobmanager.workerLimits, JSON text */
    uint64_t worker_threads;        /* workers.threads */
    char workers_external[4096];    /* workers.external: "a,b" */
    char workers_nice[1024];        /* workers.nice: "type=n,type=n" */
    uint64_t delta_shards;          /* deltaShards */
    uint64_t delta_map_size;        /* deltaMapSize */
    uint64_t bb_limit_size;         /* bulkbuilder.bulkLimitSize */
    uint64_t bb_limit_ms;           /* bulkbuilder.bulkLimitTimeMs */
    uint64_t bb_max_active;         /* bulkbuilder.maxActiveWorkflowRuns */
    uint64_t index_shards;          /* index.shards */
    uint64_t index_idle_merge_ms;   /* index.idleMergeMs */
    char converters[16384];         /* textExtractor.converters, JSON text */
    char throttle_bins[16384];      /* throttle.bins, JSON text */
    char obj_backend[8];            /* objectstore.backend: "fs" | "s3" */
    char s3_endpoint[1024];         /* objectstore.s3.endpoint */
    char s3_region[64];             /* objectstore.s3.region */
    char s3_bucket[256];            /* objectstore.s3.bucket, "": buckets */
    char s3_prefix[256];            /* objectstore.s3.prefix */
    char s3_addressing[16];         /* objectstore.s3.addressing */
    char s3_access_key[256];        /* objectstore.s3.accessKeyId */
    char s3_secret_key[256];        /* objectstore.s3.secretAccessKey */
    char s3_ca_file[4096];          /* objectstore.s3.caFile */
    uint64_t s3_part_mb;            /* objectstore.s3.partSizeMB */
    uint64_t s3_retries;            /* objectstore.s3.maxRetries */
};

/** @brief Fill @p cfg with the built-in defaults (the embedded config):
 * workers.threads and index.shards from the cores this process may use. */
void sl_cfg_defaults(struct sl_cfg *cfg);
/** @brief malloc for a process of many threads (serve, worker): a fixed
 * trim threshold, two arenas per core (8 to 32), and a detached thread
 * that calls malloc_trim every 10 s; GLIBC_TUNABLES with glibc.malloc
 * settings win over all three, MALLOC_ARENA_MAX over the arenas.  Call
 * before threads. */
void sl_cli_tune_malloc(void);
/** @brief The cores this process may use, divided by @p per, clamped to
 * @p lo .. @p hi. */
uint64_t sl_cfg_cores_clamp(unsigned per, uint64_t lo, uint64_t hi);
/**
 * @brief Apply the JSON configuration file @p path over @p cfg.
 * @return 0, SL_ENOENT (no such file), SL_EBADJSON, SL_ECONFIG (unknown key,
 * wrong type, value out of range); @p err names the file and key.
 */
int sl_cfg_load_file(struct sl_cfg *cfg, const char *path, struct sl_err *err);
/** @brief Install cfg's throttle.bins as the process's server rules
 * (sl_throttle_process_rules), before any worker starts. */
void sl_cfg_throttle_apply(const struct sl_cfg *cfg);
/** @brief Check cross-field rules after all overrides. */
int sl_cfg_validate(const struct sl_cfg *cfg, struct sl_err *err);
/** @brief Print the key table (name, type, default) for --help. */
void sl_cfg_print_keys(FILE *out);
/**
 * @brief The S3 object store of @p cfg (objectstore.s3.*), tried with one
 * listing, so that a wrong endpoint, bucket or key is said now.
 * @return 0 and *out (free with sl_obj_close), or the error in @p err.
 */
int sl_cli_open_s3(const struct sl_cfg *cfg,
                   struct sl_obj **out,
                   struct sl_err *err);

#endif /* SL_CLI_H_INCLUDED */
