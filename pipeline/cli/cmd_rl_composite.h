/* cmd_rl_composite.h — the composite-intent environment's command-line entry points, reached
 * from `gyro rl finetune` and `gyro reason` when --env composite is given (cmd_rl_composite.c). */
#ifndef GYRO_CLI_CMD_RL_COMPOSITE_H
#define GYRO_CLI_CMD_RL_COMPOSITE_H

/* 1 when argv (argv[0] = the subcommand) selects --env composite. */
int gyro_cli_is_composite(int argc, char **argv);

/* `gyro rl finetune --env composite ...` (argv[0] = "finetune"); returns the exit status. */
int gyro_cli_rl_composite_finetune(int argc, char **argv);

/* `gyro rl eval --env composite --model MODEL [--beam W] EXAMPLES...` (argv[0] = "eval"):
 * exact-set accuracy, mean F1 and atom P/R/F1 of the policy on each file; returns the exit
 * status. */
int gyro_cli_rl_composite_eval(int argc, char **argv);

/* `gyro reason --env composite --model MODEL "utterance" ...`: the steps of the policy in MODEL
 * on each of the n utterances (options already parsed by cmd_reason.c); returns the exit status. */
int gyro_cli_reason_composite(const char *model, int n, char **utterances);

#endif
