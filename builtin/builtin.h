/*
 * The built-in workers (docs/workers.md): the import workers fileCrawler,
 * webCrawler, webFetcher, webExtractor, fileFetcher, fileExtractor,
 * deltaChecker, updatePusher, textExtractor and indexWriter, each a
 * struct sl_worker_type of the worker runtime (workers/workers.h) that
 * reaches the engine through its task context only, and the hooks
 * `sluice serve` installs in the jobmanager for them.
 *
 * Threading: the tables are constant; the hooks are called by the
 * jobmanager as its header says.
 */
#ifndef SL_BUILTIN_H_INCLUDED
#define SL_BUILTIN_H_INCLUDED

#include <stddef.h>

#include "core/sl.h"
#include "workers/workers.h"

/**
 * @brief The built-in worker types, for sl_worker_register_all,
 * sl_worker_pool_start and sl_worker_find.
 * @param[out] n number of entries.
 * @return borrowed static array.
 */
const struct sl_worker_type *const *sl_builtin_workers(size_t *n);

extern const struct sl_worker_type sl_worker_fileCrawler;
extern const struct sl_worker_type sl_worker_webCrawler;
extern const struct sl_worker_type sl_worker_webFetcher;
extern const struct sl_worker_type sl_worker_webExtractor;
extern const struct sl_worker_type sl_worker_fileFetcher;
extern const struct sl_worker_type sl_worker_fileExtractor;
extern const struct sl_worker_type sl_worker_deltaChecker;
extern const struct sl_worker_type sl_worker_updatePusher;
extern const struct sl_worker_type sl_worker_textExtractor;
extern const struct sl_worker_type sl_worker_indexWriter;

/**
 * @brief The definition check of the workers, for sl_jm_set_def_check
 * (@p arg unused): the built-in workers' shared rules, then the runtime's
 * sl_worker_def_check (the declared types).  A "dataSource" must be a
 * usable delta source id (sl_delta_source_check): what the crawlers, the
 * deltaChecker and the updatePusher hand to the delta service.  Also
 * fine for external workers described in workers.json.
 * @return 0, or SL_EINVALDEF with the field "parameters.<path>".
 * @note Called under the jobmanager's definitions lock: calls nothing of
 * the jobmanager.
 */
int sl_builtin_def_check(void *arg,
                         const char *job,
                         const char *worker,
                         const json_t *desc,
                         const json_t *params,
                         struct sl_err *err);
/**
 * @brief The start check of the built-in workers, for
 * sl_jm_set_start_check with @p jm (a struct sl_jm *) as argument: an
 * updatePusher needs `jobToPushTo` or a valid `remote`, and its
 * jobToPushTo must be running in standard mode with the bulkbuilder
 * (SL_ECONFLICT naming the job otherwise).
 */
int sl_worker_start_check(void *jm,
                          const char *job,
                          const char *worker,
                          const json_t *params,
                          struct sl_err *err);
/**
 * @brief The run end hook of the built-in workers, for
 * sl_jm_set_run_end_hook with @p bb (the in-process struct sl_bb *, may
 * be NULL) as argument: when a run of a job with an updatePusher ends,
 * the open bulk of its jobToPushTo is sealed at once, so that the last
 * records pushed go to the processing job's workers now instead of
 * waiting for bulkLimitTimeMs.  A failed seal is logged (the bulk is then
 * sealed by age or size later).
 */
void sl_worker_run_end(void *bb,
                       const char *job,
                       const char *worker,
                       const json_t *params);

/** Default of the fileCrawler filter and fileFetcher parameter
 * `maxFileSize` (100 MiB). */
#define SL_WORKER_FILE_MAX_SIZE 104857600u

/**
 * @brief Escape a raw file path (any bytes but NUL) into valid UTF-8 for
 * record ids and attributes: every byte that is not part of a valid UTF-8
 * sequence, and every backslash, becomes "\xNN" (two lowercase hex
 * digits).  Reversed by sl_worker_path_unescape.
 * @return new string, caller frees with sl_free.
 */
char *sl_worker_path_escape(const char *raw);
/**
 * @brief Reverse sl_worker_path_escape: "\xNN" becomes byte NN; any
 * other character is copied.
 * @return new string, caller frees with sl_free.
 */
char *sl_worker_path_unescape(const char *escaped);
/**
 * @brief Does @p name end in an archive extension (.zip, .tar, .tgz,
 * .tar.gz, .tar.bz2, .tar.xz, .7z, .jar, .cpio, .iso; any case)?  The one
 * list the fileCrawler, the fileExtractor and the webCrawler mark
 * compounds by.
 */
int sl_worker_is_archive_name(const char *name);

#endif /* SL_BUILTIN_H_INCLUDED */
