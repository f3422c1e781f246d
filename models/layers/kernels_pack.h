/* kernels_pack.h — float32 inference products on weights packed once, with runtime CPU dispatch.
 *
 * Single-utterance inference multiplies a handful of token rows (1 to 64; 6 on average for
 * NLPCC) by each weight matrix, Y = X Wᵀ with W stored (out, in) as the layers keep it. A
 * general GEMM packs W into its own panel layout on every call, which for these shapes costs as
 * much as the product. Here W is packed once (when a model is prepared for inference) into
 * panels of GYRO_PACK_NR = 16 output columns:
 *
 *   Wp[p][k][j] = W[16p + j][k]      p < ⌈M/16⌉, k < K, j < 16 (rows past M are zero)
 *
 * so the kernel streams one panel contiguously and keeps a block of up to 6 token rows × 16
 * outputs in registers, broadcasting X[i][k] (an outer-product micro-kernel, as BLIS and
 * OpenBLAS compute C += A·B after packing). Each output is one sequential fused multiply-add
 * chain over k = 0 … K−1 in float32: a row's result depends only on its operands, never on N or
 * on its position in X (so batched and single-row predictions agree bit for bit on one ISA).
 *
 * The kernel is compiled for several instruction sets and chosen at run time (cpuid, GCC's
 * __builtin_cpu_supports): AVX-512F, AVX2+FMA, or plain C. The choice does not depend on the
 * compiler flags the library was built with, so a portable build (no -march) still runs the
 * vector kernel. GYRO_ISA=generic|avx2|avx512 in the environment forces a lower level (tests,
 * benchmarks); a level the CPU lacks falls back to the best one it has.
 */
#ifndef GYRO_LAYERS_KERNELS_PACK_H
#define GYRO_LAYERS_KERNELS_PACK_H

#include <stddef.h>

#define GYRO_PACK_NR 16 /* output columns per panel */

typedef enum gyro_isa {
    GYRO_ISA_GENERIC = 0, /* plain C (any x86-64 or other CPU) */
    GYRO_ISA_AVX2 = 1,    /* AVX2 + FMA */
    GYRO_ISA_AVX512 = 2   /* AVX-512F */
} gyro_isa;

/* The instruction set the packed kernels run on in this process: the best the CPU supports,
 * lowered by GYRO_ISA if set. Decided once (thread-safe). */
gyro_isa gyro_isa_active(void);

/* 1 when the CPU can run kernels of `isa`. */
int gyro_isa_supported(gyro_isa isa);

/* "generic", "avx2", "avx512" (NULL for an unknown value). */
const char *gyro_isa_name(gyro_isa isa);

/* Values of the packed form of an (M, K) weight matrix: ⌈M/16⌉·16·K. */
size_t gyro_pack_values(int M, int K);

/* Pack W (M, K) with row stride ldw >= K into Wp (gyro_pack_values(M, K) floats, caller-owned;
 * any alignment, 64 bytes is best). A column slice of a wider matrix (a head's D columns of
 * the (C, H·D) output projection) is packed by passing its first column and the full ldw. */
void gyro_pack_weights_f32(float *Wp, const float *W, int ldw, int M, int K);

/* Y = X Wᵀ: X (N, K) row stride ldx, Wp the packed W (M, K), Y (N, M) row stride ldy (only the
 * first M columns of each row are written). Y must not overlap X or Wp. N, M, K >= 0. */
void gyro_packed_linear_f32(float *Y, int ldy, const float *X, int ldx, const float *Wp, int N,
                            int K, int M);

/* The same on a given instruction set (tests compare the levels with each other and with the
 * reference loop); `isa` must be supported by the CPU (asserted). */
void gyro_packed_linear_f32_isa(gyro_isa isa, float *Y, int ldy, const float *X, int ldx,
                                const float *Wp, int N, int K, int M);

/* ---- the head merge on packed weights (kernels.h, gyro_merge_forward) ---------------------- */

/* Values of the packed output projection W (C, A = H·D) of the merge: the H column slices
 * M_i (C, D) packed one after the other (hyperbolic), or the whole matrix (Euclidean). */
size_t gyro_merge_pack_values(int geo, int H, int D, int C);

/* Pack W (C, H·D) for gyro_merge_forward_packed_f32 into Wp (gyro_merge_pack_values floats). */
void gyro_merge_pack_f32(float *Wp, const float *W, int geo, int H, int D, int C);

/* The inference head merge of gyro_merge_forward_f32 (no backward caches) on packed weights:
 * hyperbolic RR (N, H, C) = O_i M_iᵀ per head, then the fused gyro-sum of gyro_merge_sum_f32
 * into Y (N, C); Euclidean Y = O Wᵀ (RR unused, may be NULL). O (N, A). RR is scratch: on
 * AVX-512 and AVX2 (C <= 512) the products and the sum run 8 rows at a time on buffers of their
 * own and RR is not used. */
void gyro_merge_forward_packed_f32(float *Y, float *RR, const float *O, const float *Wp, int geo,
                                   float c, int N, int H, int D, int C);

/* The same on a given instruction set (`isa` supported by the CPU, asserted): the products on
 * that level's kernel, and on AVX-512 and AVX2 (C <= 512) the gyro-sum too, 8 rows at a time
 * (16- and 8-lane float32 passes over padded rows, the rows' coefficients in double vectors;
 * the generic level, and wider C, run gyro_merge_sum_f32). Tests compare the levels with the
 * cached merge. */
void gyro_merge_forward_packed_f32_isa(gyro_isa isa, float *Y, float *RR, const float *O,
                                       const float *Wp, int geo, float c, int N, int H, int D,
                                       int C);

#endif
