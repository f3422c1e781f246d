/* grpo.c — GRPO advantages, clipped surrogate with KL penalty, and gradients (see grpo.h). */
#include "models/rl/grpo.h"

#include <math.h>
#include <stddef.h>

gyro_grpo_config gyro_grpo_config_default(void)
{
    gyro_grpo_config c = {.clip_eps = 0.2, .kl_beta = 0.04, .adv_eps = 1e-8};
    return c;
}

gyro_status gyro_grpo_advantages(double *adv, const double *rewards, int groups, int group_size,
                                 double adv_eps)
{
    if (!adv || !rewards || groups < 0 || group_size < 1)
        return gyro_error_set(GYRO_ERR_USAGE, "grpo: bad advantage arguments (groups %d, size %d)",
                              groups, group_size);
    for (int g = 0; g < groups; g++) {
        const double *r = rewards + (size_t)g * group_size;
        double *a = adv + (size_t)g * group_size;
        double mean = 0.0;
        for (int i = 0; i < group_size; i++) {
            if (!isfinite(r[i]))
                return gyro_error_set(GYRO_ERR_NAN, "grpo: reward %d of group %d is not finite", i, g);
            mean += r[i];
        }
        mean /= group_size;
        double var = 0.0;
        for (int i = 0; i < group_size; i++) var += (r[i] - mean) * (r[i] - mean);
        double sd = sqrt(var / group_size);
        if (sd < adv_eps) sd = adv_eps;
        for (int i = 0; i < group_size; i++) a[i] = (r[i] - mean) / sd;
    }
    return GYRO_OK;
}

int gyro_grpo_weights(double *w, const int *traj_len, int n_traj)
{
    int k = 0;
    for (int t = 0; t < n_traj; t++)
        for (int s = 0; s < traj_len[t]; s++) w[k++] = 1.0 / ((double)n_traj * traj_len[t]);
    return k;
}

double gyro_grpo_loss(double *dlogp, gyro_grpo_stats *stats, const double *logp,
                      const double *logp_old, const double *logp_ref, const double *adv,
                      const double *w, const gyro_grpo_config *cfg, int n)
{
    double obj = 0.0, sur = 0.0, kl = 0.0, ratio_sum = 0.0;
    int clipped = 0;
    const double lo = 1.0 - cfg->clip_eps, hi = 1.0 + cfg->clip_eps;
    for (int k = 0; k < n; k++) {
        double rho = exp(logp[k] - logp_old[k]);
        double a = adv[k];
        double unclipped = rho * a;
        double rc = rho < lo ? lo : (rho > hi ? hi : rho);
        double clipped_term = rc * a;
        double s, ds;
        /* min(ρA, clip(ρ)A): the gradient flows only through the unclipped term, and only when
         * it is the smaller one (ties go to the unclipped term, whose gradient is the true one
         * inside the clip range). */
        if (unclipped <= clipped_term) {
            s = unclipped;
            ds = unclipped; /* d(ρA)/dlogp = ρA */
        } else {
            s = clipped_term;
            ds = 0.0;
            clipped++;
        }
        double j = s, dj = ds, klk = 0.0;
        if (cfg->kl_beta != 0.0) {
            double lr = logp_ref[k] - logp[k];
            double rho2 = exp(lr);
            klk = rho2 - lr - 1.0;          /* eq. 43 */
            j -= cfg->kl_beta * klk;
            dj -= cfg->kl_beta * (1.0 - rho2); /* d(ρ2 − log ρ2 − 1)/dlogp = −ρ2 + 1 */
        }
        obj += w[k] * j;
        sur += w[k] * s;
        kl += w[k] * klk;
        ratio_sum += rho;
        if (dlogp) dlogp[k] += -w[k] * dj;
    }
    if (stats) {
        stats->objective = obj;
        stats->surrogate = sur;
        stats->kl = kl;
        stats->clip_fraction = n > 0 ? (double)clipped / n : 0.0;
        stats->ratio_mean = n > 0 ? ratio_sum / n : 0.0;
    }
    return -obj;
}
