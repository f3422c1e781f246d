/* import_readers.h — the format readers of pipeline/import_<format>.c, called by
 * gyro_import_file (import.c). Each walks its file and hands every record to gyro_import_emit or
 * gyro_import_bad (import_record.h). Not a public API.
 */
#ifndef GYRO_PIPELINE_IMPORT_READERS_H
#define GYRO_PIPELINE_IMPORT_READERS_H

#include "models/core/status.h"
#include "pipeline/import_record.h"

/* Read the whole file c->path in c->fmt, emitting each record; errors as gyro_import_file. */
gyro_status gyro_import_lines(gyro_import_ctx *c);      /* tsv, nlpcc, fasttext (and the choice
                                                           between tsv and fasttext) */
gyro_status gyro_import_jsonl(gyro_import_ctx *c);
gyro_status gyro_import_conll(gyro_import_ctx *c);
gyro_status gyro_import_smp(gyro_import_ctx *c);
gyro_status gyro_import_crosswoz(gyro_import_ctx *c);

#endif
