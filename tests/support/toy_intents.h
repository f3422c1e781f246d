/* toy_intents.h — the small generated intent set of the classifier Check suites: music.play
 * and music.pause told apart by their characters, optionally a composite
 * music.play+weather.query, with fillers so texts vary in length.
 */
#ifndef GYRO_TESTS_TOY_INTENTS_H
#define GYRO_TESTS_TOY_INTENTS_H

#include <stdint.h>

#include "models/train_classifier.h"

/* Append n seeded examples to s (lines 1..n); classes 2 (play, pause) or 3 (and the composite).
 * Returns the status of the first failed gyro_example_set_add, else GYRO_OK. */
gyro_status toy_intents(gyro_example_set *s, int n, uint64_t seed, int classes);

#endif
