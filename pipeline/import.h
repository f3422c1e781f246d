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
 *   fasttext   fastText's supervised format: `__label__a [__label__b ...] text` per line. Every
 *              space- or tab-separated token that starts with "__label__" is a label wherever it
 *              stands (as fastText reads it); the other tokens, joined by one space, are the
 *              text. Several labels make one composite label, their names joined by '+' in the
 *              order written (`__label__query_song __label__play_song 播放` is
 *              "query_song+play_song", whose atoms are the two intents); a line without a label
 *              or without text is a bad record. Each line is its own session ("L<line>").
 *   conll      one token per line, `token<WS>tag` (BIO/BIOES tags: O, B-x, I-x, E-x, S-x), a
 *              blank line between sentences, as CAIS's ch.train; the text is the tokens joined
 *              (with one space between two ASCII letters or digits when either token is longer
 *              than one character: words are spaced, characters are not). The intent of each
 *              sentence comes from the intent file (options.intent_path: one label per line, the
 *              n-th non-blank line for the n-th sentence, as CAIS's ch.train.intent) or, without
 *              one, from a last line of the sentence with a single field (the layout of
 *              StackPropagation's and AGIF's data). The tags are checked, counted in
 *              stats.slots (B- and S- tags) and not kept. A sentence count that differs from
 *              the intent file's is GYRO_ERR_DATA whatever the mode. Session = "s<sentence>".
 *   jsonl      JSON lines: one object per line; the text is the string member
 *              options.text_field ("text"), the label options.label_field ("label": a string, a
 *              number, or an array of strings joined by '+' as a composite; several fields
 *              separated by ',' are joined by '.', e.g. "domain,intent", leaving out a null or
 *              empty one), the session
 *              options.session_field (a string or a number; none: "L<line>"). A field name may
 *              be a path into nested objects ("meta.intent").
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
#include <stdio.h>

#include "models/core/status.h"
#include "pipeline/import_record.h"
#include "proto/gyro.pb-c.h"

/* Parse a format name ("tsv", "nlpcc", "smp", "crosswoz", "fasttext", "conll", "jsonl"); 0 on
 * success, -1 if unknown. */
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

/* gyro_import_file over an open stream `fp` (not closed; e.g. the wrapper of gyro_stream_sniff)
 * named `name` in messages and in Example.source. Only the line formats (tsv, nlpcc, fasttext,
 * jsonl, and GYRO_IMPORT_LABELLED_TEXT) read from a FILE; others give GYRO_ERR_USAGE. */
gyro_status gyro_import_fp(gyro_import_format fmt, FILE *fp, const char *name,
                           const gyro_import_options *opt, gyro_import_sink sink, void *sink_ctx,
                           gyro_import_stats *stats);

#endif
