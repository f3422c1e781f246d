/* labels.h — intent labels: parsing, hierarchy, composites, and a label set (names <-> ids).
 *
 * Grammar of a label (as written in the data sets and the seed's appendix D):
 *     label  := atom ( '+' atom )*          a composite joins atoms with '+'
 *     atom   := level ( '.' level )*        a dot separates levels of the hierarchy
 *     level  := one or more UTF-8 characters other than '+', '.', whitespace, controls and
 *               invisible characters (U+00A0, U+2000..U+200F, U+3000, U+FEFF, ...)
 * Whitespace around a whole label and around each atom is ignored ("query_song + play_song" is
 * "query_song+play_song"); whitespace inside a level is an error. `music.play` is an atom of
 * depth 2 whose levels are ["music", "music.play"] (its parent is `music`);
 * `query_song+play_song` is a composite whose atoms, sorted bytewise and deduplicated, are
 * {"play_song", "query_song"}. A label keeps the spelling it was written with: the seed lists
 * both `query_song+play_song` and `query_song+play_song+query_song+play_song+play_song` as
 * distinct intents, so the order and repetition of atoms are part of a label's name, while its
 * atom set is not. gyro_label_canonical gives the order-free form (sorted, deduplicated atoms)
 * used where a data set defines its labels as sets (CrossWOZ).
 *
 * The level-k projection of a label (k = 0 for the top level) keeps the first k+1 levels of each
 * atom and joins the resulting atoms, sorted and deduplicated, with '+': `music.play` -> `music`
 * at level 0; `a.x+b.y` -> `a+b`. Accuracy "at each level of the hierarchy" compares the
 * projections of the true and the predicted label.
 *
 * A gyro_label_set maps class names to dense ids 0..count-1 in insertion order (adding the same
 * labels in the same order gives the same ids, which is how a model file restores its set). For
 * every class it keeps the atom ids (a second dense id space over all atoms seen), its depth and
 * its projections at every level. A set is not thread-safe while labels are added; once built,
 * any number of threads may read it.
 */
#ifndef GYRO_TEXT_LABELS_H
#define GYRO_TEXT_LABELS_H

#include <stddef.h>
#include "models/core/status.h"

#define GYRO_LABEL_MAX_BYTES 1024  /* longest label accepted, in bytes after trimming */
#define GYRO_LABEL_MAX_ATOMS 32    /* most atoms in one composite */
#define GYRO_LABEL_MAX_DEPTH 16    /* most levels in one atom */

/* ---- one label ---------------------------------------------------------------------------- */

/* A parsed label. All strings are owned by the struct (free with gyro_label_free). */
typedef struct gyro_label {
    char *name;       /* the label as written, whitespace around it and its atoms removed */
    int n_atoms;      /* >= 1 distinct atoms */
    char **atoms;     /* (n_atoms) sorted bytewise, deduplicated */
    int depth;        /* the largest number of levels of any atom (1 for "play_song") */
} gyro_label;

/* Parse `text` (NUL-terminated UTF-8) into *out. On error returns GYRO_ERR_DATA with a message
 * saying what is wrong and at which byte ("empty atom at byte 5 of 'a++b'"), GYRO_ERR_LIMIT for
 * a label over GYRO_LABEL_MAX_BYTES / _ATOMS / _DEPTH, GYRO_ERR_NOMEM, or GYRO_ERR_USAGE for a
 * NULL argument; *out is then zeroed and owns nothing. The message carries no file context:
 * callers prefix it with file and line. */
gyro_status gyro_label_parse(const char *text, gyro_label *out);

/* Free the strings of a parsed label and zero it. NULL or a zeroed label is a no-op. */
void gyro_label_free(gyro_label *l);

/* The order-free form of a label: its sorted, deduplicated atoms joined by '+'. *out is a new
 * string (caller frees with free()). Errors as gyro_label_parse. */
gyro_status gyro_label_canonical(const char *text, char **out);

/* The level-`level` projection of a label (level 0 = top; a level at or beyond an atom's depth
 * keeps that atom whole). *out is a new string (caller frees). Errors as gyro_label_parse, and
 * GYRO_ERR_USAGE for level < 0. */
gyro_status gyro_label_project(const char *text, int level, char **out);

/* ---- a set of labels -------------------------------------------------------------------- */

typedef struct gyro_label_set gyro_label_set;

/* A new empty set in *out (free with gyro_label_set_free). GYRO_ERR_NOMEM or GYRO_ERR_USAGE. */
gyro_status gyro_label_set_new(gyro_label_set **out);

/* Free a set and everything it owns. NULL is a no-op. */
void gyro_label_set_free(gyro_label_set *s);

/* Add a label (parsed with gyro_label_parse; its trimmed spelling is the class name) if it is
 * not present yet; *id (may be NULL) receives its class id either way. Errors as
 * gyro_label_parse (the set is unchanged), GYRO_ERR_LIMIT past 2^30 classes. */
gyro_status gyro_label_set_add(gyro_label_set *s, const char *label, int *id);

/* Class id of a label given by name (trimmed as in parsing, so " music.play " finds
 * "music.play"), or -1 when absent or unparsable. Never changes the thread's error message. */
int gyro_label_set_find(const gyro_label_set *s, const char *label);

/* Number of classes. */
int gyro_label_set_count(const gyro_label_set *s);

/* Class name of `id`, owned by the set; NULL when id is out of range. */
const char *gyro_label_set_name(const gyro_label_set *s, int id);

/* Number of atoms of class `id` (1 for a simple label); 0 when id is out of range. */
int gyro_label_set_n_atoms(const gyro_label_set *s, int id);

/* The atom ids of class `id`, sorted by atom name, owned by the set; NULL when out of range. */
const int *gyro_label_set_atoms(const gyro_label_set *s, int id);

/* Number of distinct atoms over all classes (the multi-label output size). */
int gyro_label_set_atom_count(const gyro_label_set *s);

/* Name of atom `atom_id`, owned by the set; NULL when out of range. */
const char *gyro_label_set_atom_name(const gyro_label_set *s, int atom_id);

/* Atom id of an atom given by name, or -1. */
int gyro_label_set_atom_find(const gyro_label_set *s, const char *atom);

/* Depth of class `id` (its deepest atom's number of levels); 0 when id is out of range. */
int gyro_label_set_depth(const gyro_label_set *s, int id);

/* The largest depth over all classes (the number of hierarchy levels to evaluate); 0 if empty. */
int gyro_label_set_max_depth(const gyro_label_set *s);

/* The level-`level` projection of class `id` (see the file comment), owned by the set; for
 * level >= the class's depth it is the canonical form of the class. NULL when out of range. */
const char *gyro_label_set_project(const gyro_label_set *s, int id, int level);

/* The parent of a simple class (`music` for `music.play`), owned by the set; NULL for a
 * top-level simple label and for composites (whose hierarchy is their atoms). */
const char *gyro_label_set_parent(const gyro_label_set *s, int id);

/* Class id of that parent when the parent is itself a class of the set, else -1. */
int gyro_label_set_parent_id(const gyro_label_set *s, int id);

#endif
