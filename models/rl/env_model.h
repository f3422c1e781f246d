/* env_model.h — an environment whose step is a learned transition model (model-based rollouts,
 * seed rl-hyperbolic-transformer-grpo, "Transition function learning").
 *
 * The wrapper has the shape, start distribution, observation, termination, reward and metric of
 * its base environment ("vdp" or "unicycle"), but `step` does not integrate the dynamics: it
 * feeds (observation, a/(|A|−1)) to the model saved by `gyro rl transition --out`
 * (models/rl/transition.h) and writes the predicted next observation and the predicted stage
 * cost back into the base state. GRPO then samples its rollouts from the model while
 * evaluation keeps using the true environment (gyro_rl_train_config.eval_env).
 *
 * The env interface carries no context pointer, so the loaded model lives in this module: one
 * model at a time, and its environment must not be stepped from two threads at once.
 */
#ifndef GYRO_RL_ENV_MODEL_H
#define GYRO_RL_ENV_MODEL_H

#include "models/core/status.h"
#include "models/rl/env.h"

/* Load the transition model at `path` for base environment `base` and return the wrapper
 * environment in *out (valid until gyro_rl_env_model_close; a previous model is closed first).
 * GYRO_ERR_USAGE (base has no learned-model support: only vdp and unicycle), GYRO_ERR_IO (cannot
 * open), GYRO_ERR_FORMAT (not a transition model, or one learned for another environment, with
 * the path in the message), GYRO_ERR_VERSION, GYRO_ERR_NOMEM. */
gyro_status gyro_rl_env_model_open(const gyro_rl_env *base, const char *path, const gyro_rl_env **out);

/* Free the loaded model (no-op when none). */
void gyro_rl_env_model_close(void);

#endif
