/* env.c — the registry of RL environments (see env.h). */
#include "models/rl/env.h"

#include <string.h>

static const gyro_rl_env *const all_envs[] = {
    &gyro_rl_env_root,
    &gyro_rl_env_vdp,
    &gyro_rl_env_unicycle,
    &gyro_rl_env_primefield,
    NULL,
};

const gyro_rl_env *gyro_rl_env_find(const char *name)
{
    if (!name) return NULL;
    if (!strcmp(name, "vanderpol")) name = "vdp"; /* the name gyro.proto's ReasonRequest uses */
    for (int i = 0; all_envs[i]; i++)
        if (!strcmp(all_envs[i]->name, name)) return all_envs[i];
    return NULL;
}

const gyro_rl_env *const *gyro_rl_env_all(void)
{
    return all_envs;
}
