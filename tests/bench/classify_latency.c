/* classify_latency.c — single-utterance prediction cost of a trained intent classifier, the C
 * side of tests/bench/classify_latency.sh (built by that script, not by make).
 *
 *   classify_latency train CORPUS LIMIT EPOCHS OUT [ARCH]
 *                                                    train the seed's hyperbolic architecture
 *                                                    (100-d, 3 layers, 16 heads; ARCH
 *                                                    transformer, the default) or the n-gram
 *                                                    model (ARCH ngrams, `classify train`'s
 *                                                    default) on the first LIMIT utterances of
 *                                                    an NLPCC 2018 file
 *   classify_latency bench MODEL CORPUS N REPS       CPU time of gyro_classifier_predict
 *   classify_latency dump MODEL CORPUS N             every class probability of N utterances
 *
 * bench: N utterances (the texts of the NLPCC file, in file order, skipping the first 10,000
 * so they are mostly unseen by a model trained on the head of the file), each predicted REPS
 * times after one warm-up pass; every call is timed with the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID: unlike wall time it is barely moved by other jobs on a loaded
 * machine). Prints one line of key=value pairs: median, p90, p99 and mean CPU µs per call,
 * the mean number of characters, calls per second of one core.
 *
 * dump: one line per utterance with all class probabilities (%.9g), to compare two builds.
 * lengths (classify_latency lengths MODEL CORPUS N): one line per utterance, its number of
 * characters after normalization (spaces left out), for the PyTorch twin's sequence lengths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/classifier.h"
#include "models/train_classifier.h"

/* The second and third tab-separated fields (text, label) of up to `max` records from line
 * `skip` on. Returns the number read; exits on I/O errors (a benchmark, not library code). */
static int read_corpus(const char *path, long skip, int max, char ***texts, char ***labels)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    *texts = calloc((size_t)max, sizeof **texts);
    *labels = calloc((size_t)max, sizeof **labels);
    char line[8192];
    long ln = 0;
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (ln++ < skip)
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *t = strchr(line, '\t');
        if (!t)
            continue;
        char *l = strchr(++t, '\t');
        if (!l)
            continue;
        *l++ = '\0';
        char *e = strchr(l, '\t');
        if (e)
            *e = '\0';
        if (!*t || !*l)
            continue;
        (*texts)[n] = strdup(t);
        (*labels)[n] = strdup(l);
        n++;
    }
    fclose(f);
    return n;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(const char *what, gyro_status st)
{
    fprintf(stderr, "classify_latency: %s: %s (%s)\n", what, gyro_error_message(),
            gyro_status_name(st));
    return 1;
}

static int cmd_train(const char *corpus, int limit, int epochs, const char *out, const char *arch)
{
    char **texts, **labels;
    int n = read_corpus(corpus, 0, limit, &texts, &labels);
    gyro_example_set set = {0};
    for (int i = 0; i < n; i++)
        if (gyro_example_set_add(&set, texts[i], labels[i], (uint64_t)i + 1))
            return fail("examples", GYRO_ERR_NOMEM);
    gyro_train_options opt;
    gyro_train_options_init(&opt, GYRO_TF_GEOMETRY_HYPERBOLIC);
    if (strcmp(arch, "transformer") && strcmp(arch, "ngrams")) {
        fprintf(stderr, "classify_latency: arch must be transformer or ngrams, not '%s'\n", arch);
        return 2;
    }
    opt.arch = strcmp(arch, "ngrams") ? GYRO_ARCH_TRANSFORMER : GYRO_ARCH_NGRAMS;
    opt.epochs = epochs;
    opt.quiet = 1;
    gyro_classifier *m = NULL;
    gyro_train_result res;
    gyro_status st = gyro_train_classifier(&opt, &set, NULL, &m, &res);
    if (st)
        return fail("train", st);
    if ((st = gyro_classifier_save(m, out)))
        return fail("save", st);
    printf("trained on %d utterances, %d epoch(s), dev accuracy %.3f, %d labels\n", res.n_train,
           res.epochs, res.best_dev_accuracy, gyro_classifier_num_labels(m));
    gyro_classifier_free(m);
    gyro_example_set_free(&set);
    return 0;
}

static int cmd_bench(const char *model, const char *corpus, int n, int reps, int dump)
{
    char **texts, **labels;
    n = read_corpus(corpus, 10000, n, &texts, &labels);
    gyro_classifier *m = NULL;
    gyro_classifier_scratch *s = NULL;
    gyro_status st = gyro_classifier_load(model, &m);
    if (!st)
        st = gyro_classifier_scratch_new(m, &s);
    if (st)
        return fail(model, st);
    const int K = gyro_classifier_num_labels(m);
    gyro_intent *out = calloc((size_t)K, sizeof *out);
    int got;
    if (dump == 2) { /* lengths: code points of the normalized text, spaces left out */
        for (int i = 0; i < n; i++) {
            if ((st = gyro_classifier_predict(m, s, texts[i], 1, out, &got)))
                return fail(texts[i], st);
            int len = 0;
            for (const unsigned char *p = (const unsigned char *)gyro_classifier_scratch_normalized(s); *p; p++)
                len += (*p & 0xC0) != 0x80 && *p != ' ';
            printf("%d\n", len);
        }
        return 0;
    }
    if (dump) {
        for (int i = 0; i < n; i++) {
            if ((st = gyro_classifier_predict(m, s, texts[i], K, out, &got)))
                return fail(texts[i], st);
            printf("%d", i);
            for (int k = 0; k < got; k++)
                printf("\t%s=%.9g", out[k].label, out[k].probability);
            printf("\n");
        }
        return 0;
    }
    long chars = 0;
    for (int i = 0; i < n; i++) { /* warm-up; count characters (code points) */
        if ((st = gyro_classifier_predict(m, s, texts[i], 5, out, &got)))
            return fail(texts[i], st);
        for (const unsigned char *p = (const unsigned char *)texts[i]; *p; p++)
            chars += (*p & 0xC0) != 0x80;
    }
    double *t = malloc((size_t)n * reps * sizeof *t);
    long nt = 0;
    double total = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < n; i++) {
            double t0 = cpu_us();
            st = gyro_classifier_predict(m, s, texts[i], 5, out, &got);
            double dt = cpu_us() - t0;
            if (st)
                return fail(texts[i], st);
            t[nt++] = dt;
            total += dt;
        }
    qsort(t, (size_t)nt, sizeof *t, cmp_double);
    printf("utterances=%d reps=%d mean_chars=%.1f median_us=%.1f p90_us=%.1f p99_us=%.1f "
           "mean_us=%.1f calls_per_cpu_s=%.0f\n",
           n, reps, (double)chars / n, t[nt / 2], t[(long)(0.90 * (nt - 1))],
           t[(long)(0.99 * (nt - 1))], total / nt, 1e6 * nt / total);
    free(t);
    free(out);
    gyro_classifier_scratch_free(s);
    gyro_classifier_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 6 || argc == 7) && !strcmp(argv[1], "train"))
        return cmd_train(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5],
                         argc == 7 ? argv[6] : "transformer");
    if (argc == 6 && !strcmp(argv[1], "bench"))
        return cmd_bench(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), 0);
    if (argc == 5 && !strcmp(argv[1], "dump"))
        return cmd_bench(argv[2], argv[3], atoi(argv[4]), 1, 1);
    if (argc == 5 && !strcmp(argv[1], "lengths"))
        return cmd_bench(argv[2], argv[3], atoi(argv[4]), 1, 2);
    fprintf(stderr, "usage: %s train CORPUS LIMIT EPOCHS OUT [transformer|ngrams] | "
                    "bench MODEL CORPUS N REPS | lengths MODEL CORPUS N | "
                    "dump MODEL CORPUS N\n", argv[0]);
    return 2;
}
