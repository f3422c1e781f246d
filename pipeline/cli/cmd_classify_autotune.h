/* cmd_classify_autotune.h — `gyro classify autotune` (cmd_classify_autotune.c), reached from
 * `gyro classify` (cmd_classify.c). */
#ifndef GYRO_CLI_CMD_CLASSIFY_AUTOTUNE_H
#define GYRO_CLI_CMD_CLASSIFY_AUTOTUNE_H

/* `gyro classify autotune [options] --dev DEV.pb -o MODEL TRAIN.pb` (argv[0] = "autotune");
 * returns the exit status. */
int gyro_cli_classify_autotune(int argc, char **argv);

#endif
