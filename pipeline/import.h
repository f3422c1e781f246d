/* import.h — turn labelled data sets into gyro.v1.Example records.
 *
 * Formats (one reader each, in pipeline/import_<format>.c; the record checks they share and the
 * types below are pipeline/import_record.h):
 *   tsv        `text<TAB>label[<TAB>session]` per line. Without a session column every line is
 *              its own session ("L<line>"). A first line "text<TAB>label[<TAB>session]" is
 *              taken as a header and skipped. Blank lines are skipped.
 *   nlpcc      NLPCC 2018 task 4: `session<TAB>utterance<TAB>label<TAB>tagged utterance`
 *              (the fourth column may be absent), blank lines between sessions.
 *   smp        SMP2020-ECDT task 1: a JSON array of {"text", "domain", "intent", ...};
 *              label = domain "." intent (just domain when intent is empty or null); every
 *              record is its own session ("r<index>").
 *   crosswoz   CrossWOZ dialogues, a JSON object {dialogue id: {"messages": [...]}} as a .json
 *              file or inside a .zip archive (every member ending in ".json" is read). One
 *              example per user turn (role "usr"): label = the sorted, deduplicated set of
 *              "act.domain" of its dialog_act tuples [act, domain, slot, value] joined by '+'
 *              (so "Inform.酒店+Request.酒店" is a composite of two atoms); session = dialogue id.
 * Every reader accepts CRLF line ends and a UTF-8 byte-order mark at the start of the file and
 * of a text field.
 *
 * Bad records: an unparsable label (labels.h grammar), an empty text, invalid UTF-8, a NUL
 * byte, a wrong number of columns, a missing or mistyped JSON field, a line over 1 MiB. Each is
 * reported through the `warn` callback as "file:line: what is wrong" and counted; in strict
 * mode the first one stops the import with GYRO_ERR_DATA and the same message. A file that is
 * not the format at all (malformed JSON, not a ZIP, wrong top-level type) is GYRO_ERR_DATA /
 * GYRO_ERR_FORMAT whatever the mode. The text is kept as written (trimmed of surrounding ASCII
 * whitespace); normalization is the classifier's job.
 */
#ifndef GYRO_PIPELINE_IMPORT_H
#define GYRO_PIPELINE_IMPORT_H

#include <stdint.h>

#include "models/core/status.h"
#include "pipeline/import_record.h"
#include "proto/gyro.pb-c.h"

/* Parse a format name ("tsv", "nlpcc", "smp", "crosswoz"); 0 on success, -1 if unknown. */
int gyro_import_format_parse(const char *name, gyro_import_format *out);

/* Name of a format (as accepted by gyro_import_format_parse). */
const char *gyro_import_format_name(gyro_import_format f);

/* Import the file at `path` ("-" = stdin for the line formats and JSON; a ZIP archive must be a
 * file) in format `fmt`, calling `sink` once per example in file order. Example.source is
 * "<format>:<file name without directories>" (for a ZIP archive
 * "<format>:<archive>:<member>"), Example.line the 1-based line where the record starts.
 * `opt` may be NULL (non-strict, no warnings); `stats` may be NULL. Errors: GYRO_ERR_IO
 * (cannot read), GYRO_ERR_DATA/FORMAT (see the file comment), GYRO_ERR_NOMEM, or the sink's
 * status. Examples passed to the sink before an error stay passed. */
gyro_status gyro_import_file(gyro_import_format fmt, const char *path,
                             const gyro_import_options *opt, gyro_import_sink sink, void *sink_ctx,
                             gyro_import_stats *stats);

#endif
