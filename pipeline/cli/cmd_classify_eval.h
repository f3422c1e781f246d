/* cmd_classify_eval.h — `gyro classify eval` (cmd_classify_eval.c), reached from `gyro classify`
 * (cmd_classify.c). */
#ifndef GYRO_CLI_CMD_CLASSIFY_EVAL_H
#define GYRO_CLI_CMD_CLASSIFY_EVAL_H

/* `gyro classify eval [options] DATA.pb` (argv[0] = "eval"); returns the exit status. */
int gyro_cli_classify_eval(int argc, char **argv);

#endif
