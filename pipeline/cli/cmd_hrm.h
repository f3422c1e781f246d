/* cmd_hrm.h — the Sudoku side of `gyro reason` (`gyro reason --env sudoku`), implemented beside
 * `gyro hrm` in cmd_hrm.c. */
#ifndef GYRO_CLI_CMD_HRM_H
#define GYRO_CLI_CMD_HRM_H

/* 1 when the arguments ask for --env sudoku (before a "--"). */
int gyro_cli_is_sudoku(int argc, char **argv);

/* `gyro reason --env sudoku --model MODEL [--no-act] [PUZZLE ...]`: solve each puzzle (the
 * arguments, or the lines of standard input) with an HRM model and print the board after every
 * segment. Returns the exit code (2 usage, 65 malformed puzzle or model file, 1 I/O). */
int gyro_cli_reason_sudoku(int argc, char **argv);

#endif
