/* checkpoint.h — char2vec checkpoints: everything needed to continue a run after a crash
 * (the file layout is described in checkpoint.c). Written by the trainer (char2vec.c) and read
 * back by `gyro char2vec --resume`.
 */
#ifndef GYRO_EMBEDDINGS_CHECKPOINT_H
#define GYRO_EMBEDDINGS_CHECKPOINT_H

#include "embeddings/c2v_model.h"
#include "models/core/status.h"

/* Write a checkpoint atomically. GYRO_ERR_IO on failure (old file kept); GYRO_ERR_NAN, writing
 * nothing, when a vector is NaN or infinite (the message names the token). */
gyro_status gyro_c2v_checkpoint_save(const gyro_c2v_model *m, const char *path);

/* Load a checkpoint into *m (initialised here; free it with gyro_c2v_model_free, also on
 * error). Errors: GYRO_ERR_IO (cannot open), GYRO_ERR_FORMAT (foreign, truncated or corrupt
 * file: bad magic, checksum mismatch, impossible sizes), GYRO_ERR_VERSION (newer file). */
gyro_status gyro_c2v_checkpoint_load(const char *path, gyro_c2v_model *m);

#endif
