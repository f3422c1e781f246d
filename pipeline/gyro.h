/* gyro.h — the public API of libgyro in one header: `#include <gyro/gyro.h>`, from C or C++.
 *
 * What a program that links -lgyro (`pkg-config --cflags --libs gyro`) may use: the headers
 * below, which `make install` copies to INCLUDEDIR/gyro/ (their own includes rewritten to
 * <gyro/...>), and nothing else. Every other header of the tree (the *_impl.h kernels, the
 * hyperbolic epsilons, the layers, RL, the gRPC server's internals) is gyro's own business and
 * may change between any two versions; the shared library does not export their symbols either
 * (pipeline/libgyro.map: only gyro_* and gyro__*).
 *
 * The headers are C11. C++ sees them inside one extern "C" block (here only: the headers
 * themselves stay plain C); the C library and protobuf-c headers they need are included first,
 * outside the block, so C++'s own versions of those headers are never given C linkage.
 *
 * Every function returns a gyro_status or documents what it does on error; the message of the
 * last failure on this thread is gyro_error_message() (models/core/status.h).
 */
#ifndef GYRO_GYRO_H
#define GYRO_GYRO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#ifdef __cplusplus
extern "C" {
#endif

/* status codes, random numbers, progress lines */
#include "models/core/status.h"
#include "models/core/rng.h"
#include "models/core/progress.h"

/* hyperbolic geometry: Poincaré ball, hyperboloid, conversions between them */
#include "models/hyp/poincare.h"
#include "models/hyp/lorentz.h"
#include "models/hyp/convert.h"

/* text: normalization, UTF-8, label sets */
#include "models/text/normalize.h"
#include "models/text/utf8.h"
#include "models/text/labels.h"

/* character embeddings: vocabulary, tables, char2vec training, conversion, neighbours, plots */
#include "embeddings/vocab.h"
#include "embeddings/table.h"
#include "embeddings/corpus.h"
#include "models/core/sync.h"
#include "embeddings/c2v_model.h"
#include "embeddings/c2v_sync.h"
#include "embeddings/checkpoint.h"
#include "embeddings/char2vec.h"
#include "embeddings/convert.h"
#include "embeddings/neighbors.h"
#include "embeddings/similarity.h"
#include "embeddings/plot.h"

/* intent classification: the model, its training and evaluation */
#include "models/tokenizer.h"
#include "models/transformer.h"
#include "models/ngrams.h"
#include "models/classifier.h"
#include "models/optim.h"
#include "models/metrics.h"
#include "models/train_classifier.h"

/* streams of protobuf messages (gyro.proto) and the stages over them */
#include "proto/gyro.pb-c.h"
#include "pipeline/stream.h"
#include "pipeline/text_reader.h"
#include "pipeline/normalize_stage.h"
#include "pipeline/import_record.h"
#include "pipeline/import.h"
#include "pipeline/split.h"
#include "pipeline/table_file.h"
#include "pipeline/example_file.h"

/* pictures: a table in the Poincaré disk, a confusion matrix (SVG; PNG through rsvg-convert) */
#include "pipeline/picture.h"

#ifdef __cplusplus
}
#endif

#endif
