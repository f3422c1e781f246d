/* reason_sudoku.h — the gRPC Reason method with environment "sudoku": a hierarchical reasoning
 * model (models/hrm.h, from `gyro hrm train`) solving the 9×9 puzzle of the request, as `gyro
 * reason --env sudoku` does on the command line.
 *
 * Request: input = the puzzle, 81 characters (digits 1–9, '.' or '0' for blanks; trailing
 * spaces and newlines ignored); max_steps, sample and seed are not used (the model's Q head
 * halts, at most M_max segments; inference is deterministic).
 * Response: one step per HRM segment — index (1-based), action "segment", state = the board after
 * the segment (the clues and the model's digits, 81 characters), probability = σ(Q_halt) of the
 * segment, reward = 1 when that board is the solution, else 0; answer = the last board;
 * total_reward = 1 if it is the solution; model_version "hrm-sudoku-<geometry>-C<dim>-N<n>T<t>M<m>".
 * Errors: INVALID_ARGUMENT for a malformed puzzle (wrong size, a character other than digits and
 * blanks, a digit repeated in a row, column or box: the parser's message) or one without a
 * solution; UNAVAILABLE when the server runs without --hrm-model.
 */
#ifndef GYRO_PIPELINE_REASON_SUDOKU_H
#define GYRO_PIPELINE_REASON_SUDOKU_H

#include "models/core/status.h"
#include "pipeline/grpc_core.h"
#include "proto/gyro.pb-c.h"

typedef struct gyro_reason_sudoku gyro_reason_sudoku;

/* Load the Sudoku model at `path` for n_threads handler threads (each gets its own activations
 * on first use; the model is shared read-only). Errors: the loader's status (GYRO_ERR_IO,
 * GYRO_ERR_FORMAT, GYRO_ERR_VERSION; the message names the path), GYRO_ERR_FORMAT for a model
 * that is not a 9×9 Sudoku model, GYRO_ERR_USAGE (n_threads < 1), GYRO_ERR_NOMEM. *out is NULL on
 * error. Free with gyro_reason_sudoku_free. */
gyro_status gyro_reason_sudoku_new(const char *path, int n_threads, gyro_reason_sudoku **out);

/* NULL is a no-op. */
void gyro_reason_sudoku_free(gyro_reason_sudoku *r);

/* Answer one Reason request on handler thread t (0 <= t < n_threads; one call per thread at a
 * time) and send the reply; r NULL answers UNAVAILABLE. Returns the gRPC status code sent
 * (GYRO_RPC_OK or the error's). */
int gyro_reason_sudoku_handle(gyro_reason_sudoku *r, int t, const Gyro__V1__ReasonRequest *rq,
                              gyro_rpc_reply *reply);

#endif
