/* generate_music.h — the generator of gyro's labelled music-domain set.
 *
 * The seed paper's classifier was trained on 16,332 private utterances over 125 music intents
 * (hyperbolic-chinese-nlu, appendix D), many of them composites such as
 * `query_song+add_to_favourite+play_song`. gyro cannot ship that data, so it generates a set with
 * the same label inventory from templates and slot lists written for the project
 * (corpora/music/):
 *   intents.txt     the 125 intents, one per line
 *   templates.tsv   atom<TAB>template, with {slot} placeholders ({song2}: a second song)
 *   slots/NAME.txt  the values of slot NAME, one per line
 *   connectors.txt  joins the commands of a composite ("，然后", "再", ...)
 *   prefixes.txt, suffixes.txt   openings and endings added to some utterances
 * In every file '#' starts a comment line, blank lines are skipped, CRLF and a BOM are accepted.
 * These files are compiled into libgyro at build time (pipeline/embedded.h), so the generator
 * needs no source tree: gyro_music_gen_load_default reads that copy, gyro_music_gen_load a
 * directory with the same layout.
 *
 * Generation is deterministic for a seed: example i draws its intent from a seeded permutation
 * of the intents (a new permutation every 125 examples, so any n >= 125 covers every intent and
 * the counts of two intents differ by at most one), then one template per atom in written order,
 * joined by connectors, slots filled uniformly, with an opening (35%) and an ending (25%).
 * Consecutive examples form sessions of 1-4 utterances, so session-preserving splits apply.
 */
#ifndef GYRO_PIPELINE_GENERATE_MUSIC_H
#define GYRO_PIPELINE_GENERATE_MUSIC_H

#include <stddef.h>
#include <stdint.h>

#include "models/core/status.h"
#include "pipeline/embedded.h"
#include "pipeline/import.h"

/* How the embedded files are named in error messages ("embedded:corpora/music/intents.txt:3"). */
#define GYRO_MUSIC_EMBEDDED_ORIGIN "embedded:corpora/music"

typedef struct gyro_music_gen gyro_music_gen;

/* Load and check the files of `dir` (e.g. "corpora/music"). Every atom of every intent needs a
 * template, every template's atom must occur in some intent, every {slot} needs a non-empty
 * slots/<slot>.txt. Errors name the file and line: GYRO_ERR_IO (missing file), GYRO_ERR_DATA
 * (bad line, unknown slot, unbalanced brace, bad label, invalid UTF-8), GYRO_ERR_NOMEM. *out is
 * NULL on error. */
gyro_status gyro_music_gen_load(const char *dir, gyro_music_gen **out);

/* The same from in-memory files named relative to the set ("templates.tsv", "slots/song.txt"),
 * e.g. a table of pipeline/embedded.h. `origin` stands for the directory in error messages
 * (NULL: "[embedded]"); a file absent from the table is GYRO_ERR_IO. The files are only read
 * during the call. Other errors as gyro_music_gen_load; *out is NULL on error. */
gyro_status gyro_music_gen_load_files(const gyro_data_file *files, size_t n, const char *origin,
                                      gyro_music_gen **out);

/* The set compiled into libgyro: corpora/music/ of the source tree libgyro was built from
 * (gyro_music_files, origin GYRO_MUSIC_EMBEDDED_ORIGIN). Errors as gyro_music_gen_load_files. */
gyro_status gyro_music_gen_load_default(gyro_music_gen **out);

/* Free a generator. NULL is a no-op. */
void gyro_music_gen_free(gyro_music_gen *g);

/* Number of intents and intent i (the label as written in intents.txt; owned by g). */
size_t gyro_music_gen_n_intents(const gyro_music_gen *g);
const char *gyro_music_gen_intent(const gyro_music_gen *g, size_t i);

/* Number of templates loaded (for the summary). */
size_t gyro_music_gen_n_templates(const gyro_music_gen *g);

/* Generate `n` examples for `seed`, passing each to `sink` (the message is valid during the call
 * only). Example.source is "music:seed=<seed>", Example.session "m<seed>-<k>", Example.line the
 * 1-based index. Errors: GYRO_ERR_NOMEM, or the sink's status (generation stops). */
gyro_status gyro_music_generate(const gyro_music_gen *g, uint64_t seed, uint64_t n,
                                gyro_import_sink sink, void *ctx);

#endif
