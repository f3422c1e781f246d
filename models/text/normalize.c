/* normalize.c — the text normalizer (see normalize.h for the steps and their order).
 *
 * The text moves through code-point arrays: strict UTF-8 decoding with repair (models/text/utf8.h)
 * → ANSI escape removal in place → NFKC (+ case folding) by utf8proc_decompose +
 * utf8proc_normalize_utf32, or a per-character shortcut for ordinary Chinese lines (nf_fast) →
 * Traditional→Simplified by ICU utrans on UTF-16, only where a rule can apply → control removal
 * and whitespace folding while encoding to UTF-8 → grapheme clusters by an ICU character break
 * iterator run over the UTF-8 text through UText.
 *
 * Every buffer is owned by the normalizer and grows geometrically to the largest document seen;
 * after that a call allocates nothing. A normalizer is not thread-safe: the gRPC server and the
 * trainers create one per thread (the ICU objects are per-normalizer as well).
 *
 * T2S cost: utrans runs only where a phrase rule matches, from there to the end of the run of
 * rule characters; single-character rules are memoized (see the comment above
 * t2s_trigger_init for why that is exact); pieces are at most T2S_PIECE UTF-16 units, so the
 * cost stays linear in the line length (a 10 MB line).
 *
 * Segmentation cost: between two code points that both have Grapheme_Cluster_Break=Other and are
 * not Extended_Pictographic (printable ASCII, CJK ideographs, common CJK punctuation) there is
 * always a boundary (UAX #29 GB999), so those are cut without ICU; the break iterator runs only
 * over the stretches between such certain boundaries that hold more than one code point.
 */
#include "models/text/normalize.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/utf16.h>
#include <unicode/utrans.h>
#include <utf8proc.h>

#include "models/text/utf8.h"

#define T2S_PIECE 4096
#define T2S_MEMO 4096

/* One memoized single-character T2S result. */
typedef struct t2s_memo_entry {
    int32_t key;      /* code point, -1 when empty */
    uint8_t n;        /* code points in out */
    int32_t out[3];
} t2s_memo_entry;

struct gyro_normalizer {
    gyro_normalize_options opt;
    UTransliterator *trans;      /* NULL when !opt.t2s */
    UBreakIterator *brk;         /* NULL when !opt.segment */
    char *orig;      size_t orig_cap;    /* (3*len+1) repaired input */
    int32_t *cps;    size_t cps_cap;     /* decoded code points (ANSI removal in place) */
    char *tmp;       size_t tmp_cap;     /* UTF-8 fed to utf8proc */
    int32_t *nf;     size_t nf_cap;      /* utf8proc output */
    UChar *u16;      size_t u16_cap;     /* one T2S piece */
    int32_t *t2s;    size_t t2s_cap;     /* T2S output code points */
    char *text;      size_t text_cap;    /* normalized UTF-8 */
    char *cbuf;      size_t cbuf_cap;    /* clusters, each NUL-terminated */
    char **chars;    size_t chars_cap;   /* pointers into cbuf */
    t2s_memo_entry memo[T2S_MEMO];       /* single-character T2S results, direct-mapped */
};

static void t2s_trigger_init(void);
static pthread_once_t t2s_trigger_once = PTHREAD_ONCE_INIT;

/* ---- options ------------------------------------------------------------------------------ */

void gyro_normalize_options_init(gyro_normalize_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->t2s = 1;
    opt->nfkc = 1;
    opt->case_fold = 0;
    opt->strip_ansi = 1;
    opt->strip_controls = 1;
    opt->fold_whitespace = 1;
    opt->segment = 1;
    opt->invalid = GYRO_INVALID_REPLACE;
}

static const char *const policy_names[] = {"replace", "skip", "fail"};

int gyro_invalid_policy_parse(const char *name, gyro_invalid_policy *out)
{
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, policy_names[i]) == 0) {
            *out = (gyro_invalid_policy)i;
            return 0;
        }
    return -1;
}

const char *gyro_invalid_policy_name(gyro_invalid_policy p)
{
    return (unsigned)p < 3 ? policy_names[p] : "unknown";
}

/* ---- life cycle --------------------------------------------------------------------------- */

/* Grow *p (elements of `elem` bytes, capacity *cap) to hold at least `need` elements. */
static gyro_status grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    void **p = pp;
    if (need <= *cap && *p) return GYRO_OK;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *np = realloc(*p, c * elem);
    if (!np) return gyro_error_set(GYRO_ERR_NOMEM, "normalize: out of memory (%zu bytes)", c * elem);
    *p = np;
    *cap = c;
    return GYRO_OK;
}

gyro_status gyro_normalizer_new(const gyro_normalize_options *opt, gyro_normalizer **out)
{
    if (!out) return gyro_error_set(GYRO_ERR_USAGE, "normalize: NULL output");
    gyro_normalize_options o;
    if (opt) o = *opt;
    else gyro_normalize_options_init(&o);
    if ((unsigned)o.invalid > GYRO_INVALID_FAIL)
        return gyro_error_set(GYRO_ERR_USAGE, "normalize: unknown invalid-UTF-8 policy %d", (int)o.invalid);
    gyro_normalizer *n = calloc(1, sizeof *n);
    if (!n) return gyro_error_set(GYRO_ERR_NOMEM, "normalize: out of memory");
    n->opt = o;
    for (int i = 0; i < T2S_MEMO; i++) n->memo[i].key = -1;
    UErrorCode st = U_ZERO_ERROR;
    if (o.t2s) {
        UChar id[32];
        UParseError pe;
        u_uastrcpy(id, "Traditional-Simplified");
        n->trans = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, &pe, &st);
        if (U_SUCCESS(st)) pthread_once(&t2s_trigger_once, t2s_trigger_init);
        if (U_FAILURE(st)) {
            gyro_normalizer_free(n);
            return gyro_error_set(GYRO_ERR_UNAVAILABLE,
                                  "normalize: ICU cannot open the Traditional-Simplified "
                                  "transliterator (%s); is the ICU data package installed?",
                                  u_errorName(st));
        }
    }
    if (o.segment) {
        n->brk = ubrk_open(UBRK_CHARACTER, "", NULL, 0, &st);
        if (U_FAILURE(st)) {
            gyro_normalizer_free(n);
            return gyro_error_set(GYRO_ERR_UNAVAILABLE,
                                  "normalize: ICU cannot open a character break iterator (%s)",
                                  u_errorName(st));
        }
    }
    *out = n;
    return GYRO_OK;
}

void gyro_normalizer_free(gyro_normalizer *n)
{
    if (!n) return;
    if (n->trans) utrans_close(n->trans);
    if (n->brk) ubrk_close(n->brk);
    free(n->orig);
    free(n->cps);
    free(n->tmp);
    free(n->nf);
    free(n->u16);
    free(n->t2s);
    free(n->text);
    free(n->cbuf);
    free(n->chars);
    free(n);
}

const gyro_normalize_options *gyro_normalizer_options(const gyro_normalizer *n)
{
    return n ? &n->opt : NULL;
}

/* ---- steps -------------------------------------------------------------------------------- */

/* Step 1: decode with the invalid-UTF-8 policy into n->cps and the repaired copy n->orig.
 * Returns GYRO_OK and sets *ncp, *olen, *repairs; under SKIP stops at the first error with
 * *repairs = 1 (the caller marks the document skipped). */
static gyro_status decode(gyro_normalizer *n, const uint8_t *in, size_t len, size_t *ncp,
                          size_t *olen, uint32_t *repairs)
{
    gyro_status s;
    if ((s = grow(&n->orig, &n->orig_cap, 3 * len + 1, 1)) ||
        (s = grow(&n->cps, &n->cps_cap, len + 1, sizeof(int32_t))))
        return s;
    size_t i = 0, o = 0, k = 0;
    uint32_t bad = 0;
    while (i < len) {
        uint8_t b = in[i];
        if (b < 0x80) {
            n->orig[o++] = (char)b;
            n->cps[k++] = b;
            i++;
            continue;
        }
        int32_t cp;
        size_t used = gyro_utf8_decode(in + i, len - i, &cp);
        if (cp < 0) {
            bad++;
            if (n->opt.invalid == GYRO_INVALID_FAIL)
                return gyro_error_set(GYRO_ERR_DATA, "invalid UTF-8 byte 0x%02X at byte %zu", b, i);
            if (n->opt.invalid == GYRO_INVALID_SKIP) {
                *repairs = bad;
                *ncp = 0;
                *olen = 0;
                return GYRO_OK;
            }
            memcpy(n->orig + o, "\xEF\xBF\xBD", 3);
            o += 3;
            n->cps[k++] = GYRO_UTF8_REPLACEMENT;
        } else {
            memcpy(n->orig + o, in + i, used);
            o += used;
            n->cps[k++] = cp;
        }
        i += used;
    }
    n->orig[o] = '\0';
    *ncp = k;
    *olen = o;
    *repairs = bad;
    return GYRO_OK;
}

/* Step 2: remove ANSI escape sequences from c[0..len) in place (ECMA-48: CSI, OSC/DCS/SOS/PM/APC
 * strings ended by BEL or ST, nF and Fp/Fe/Fs two-character escapes). Returns the new length. */
static size_t strip_ansi(int32_t *c, size_t len)
{
    size_t j = 0, k = 0;
    while (k < len) {
        int32_t x = c[k];
        if (x != 0x1b && x != 0x9b) {
            c[j++] = c[k++];
            continue;
        }
        int32_t next = k + 1 < len ? c[k + 1] : -1;
        if (x == 0x9b || next == '[') {                    /* CSI params intermediates final */
            size_t p = k + (x == 0x9b ? 1 : 2);
            while (p < len && c[p] >= 0x30 && c[p] <= 0x3f) p++;
            while (p < len && c[p] >= 0x20 && c[p] <= 0x2f) p++;
            if (p < len && c[p] >= 0x40 && c[p] <= 0x7e) p++;
            k = p;
        } else if (next == ']' || next == 'P' || next == 'X' || next == '^' || next == '_') {
            size_t p = k + 2;                              /* string up to BEL, ESC \ or ST */
            while (p < len && c[p] != 0x07 && c[p] != 0x9c && !(c[p] == 0x1b && p + 1 < len && c[p + 1] == '\\'))
                p++;
            if (p < len) k = p + (c[p] == 0x1b ? 2 : 1);   /* terminated: drop all of it */
            else k += 2;                                   /* unterminated: drop ESC and intro */
        } else if (next >= 0x20 && next <= 0x2f) {         /* nF: intermediates then final */
            size_t p = k + 1;
            while (p < len && c[p] >= 0x20 && c[p] <= 0x2f) p++;
            if (p < len && c[p] >= 0x30 && c[p] <= 0x7e) p++;
            k = p;
        } else if (next >= 0x30 && next <= 0x7e) {         /* two-character escape */
            k += 2;
        } else {
            k += 1;                                        /* a lone ESC */
        }
    }
    return j;
}

/* Step 3: NFKC (or NFC) and case folding through utf8proc. Input c[0..len); the result is in
 * n->nf, its length in *out_len. */
static gyro_status nfkc(gyro_normalizer *n, const int32_t *c, size_t len, size_t *out_len)
{
    gyro_status s;
    if ((s = grow(&n->tmp, &n->tmp_cap, 4 * len + 1, 1))) return s;
    size_t t = 0;
    for (size_t i = 0; i < len; i++) t += gyro_utf8_encode(n->tmp + t, c[i]);
    utf8proc_option_t opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    if (n->opt.nfkc) opts |= UTF8PROC_COMPAT;
    if (n->opt.case_fold) opts |= UTF8PROC_CASEFOLD;
    for (;;) {
        if ((s = grow(&n->nf, &n->nf_cap, len + 16, sizeof(int32_t)))) return s;
        utf8proc_ssize_t r = utf8proc_decompose((const utf8proc_uint8_t *)n->tmp, (utf8proc_ssize_t)t,
                                                n->nf, (utf8proc_ssize_t)n->nf_cap, opts);
        if (r < 0)
            return gyro_error_set(GYRO_ERR_INTERNAL, "normalize: utf8proc: %s", utf8proc_errmsg(r));
        if ((size_t)r > n->nf_cap) {
            len = (size_t)r;   /* grow to the size utf8proc asks for and decompose again */
            continue;
        }
        r = utf8proc_normalize_utf32(n->nf, r, opts);
        if (r < 0)
            return gyro_error_set(GYRO_ERR_INTERNAL, "normalize: utf8proc: %s", utf8proc_errmsg(r));
        *out_len = (size_t)r;
        return GYRO_OK;
    }
}

/* The NFKC shortcut for ordinary Chinese lines. Returns 1 (and maps c[0..len) in place) when
 * every code point is one of:
 *   - printable ASCII, a CJK unified ideograph, or common CJK / typographic punctuation
 *     (、。〈〉《》「」『』【】 — ‘’ “” ·), which NFKC leaves unchanged;
 *   - a full-width ASCII form U+FF01..U+FF5E (mapped to U+0021..U+007E) or the ideographic
 *     space U+3000 (mapped to U+0020), whose NFKC is exactly that single character.
 * All of these have canonical combining class 0 and form no canonical composition with one
 * another, so NFKC of the line is the per-character mapping. With case folding, a capital
 * A-Z (before or after the mapping) sends the line through utf8proc. Returns 0 (c untouched)
 * otherwise. tests/check_normalize.c compares the result with utf8proc on real text. */
static int nf_fast(int32_t *c, size_t len, int case_fold)
{
    for (size_t i = 0; i < len; i++) {
        int32_t x = c[i];
        if (x >= 0xff01 && x <= 0xff5e) x -= 0xfee0;
        else if (x == 0x3000) x = 0x20;
        if (x >= 0x20 && x <= 0x7e) {
            if (case_fold && x >= 'A' && x <= 'Z') return 0;
        } else if (!((x >= 0x4e00 && x <= 0x9fff) || (x >= 0x3400 && x <= 0x4dbf) ||
                     x == 0x3001 || x == 0x3002 || (x >= 0x3008 && x <= 0x3011) ||
                     x == 0x2014 || x == 0x2018 || x == 0x2019 || x == 0x201c || x == 0x201d ||
                     x == 0xb7)) {
            return 0;
        }
    }
    for (size_t i = 0; i < len; i++) {
        if (c[i] >= 0xff01 && c[i] <= 0xff5e) c[i] -= 0xfee0;
        else if (c[i] == 0x3000) c[i] = 0x20;
    }
    return 1;
}

static int is_han(int32_t c)
{
    return (c >= 0x3400 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) ||
           (c >= 0x20000 && c <= 0x3134f);
}

/* Transliterate one piece c[0..len) and append its code points to n->t2s at *olen. */
static gyro_status t2s_piece(gyro_normalizer *n, const int32_t *c, size_t len, size_t *olen)
{
    gyro_status s;
    size_t cap = 2 * len + 64;
    for (;;) {
        if ((s = grow(&n->u16, &n->u16_cap, cap, sizeof(UChar)))) return s;
        int32_t u = 0;
        for (size_t i = 0; i < len; i++) U16_APPEND_UNSAFE(n->u16, u, c[i]);
        int32_t text_len = u, limit = u;
        UErrorCode st = U_ZERO_ERROR;
        utrans_transUChars(n->trans, n->u16, &text_len, (int32_t)n->u16_cap, 0, &limit, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR) {
            cap = n->u16_cap * 2;
            continue;
        }
        if (U_FAILURE(st))
            return gyro_error_set(GYRO_ERR_INTERNAL, "normalize: ICU transliteration failed: %s",
                                  u_errorName(st));
        if ((s = grow(&n->t2s, &n->t2s_cap, *olen + (size_t)text_len + 1, sizeof(int32_t)))) return s;
        for (int32_t i = 0; i < text_len;) {
            UChar32 x;
            U16_NEXT(n->u16, i, text_len, x);
            n->t2s[(*olen)++] = x;
        }
        return GYRO_OK;
    }
}

/* T2S without calling utrans on every character. ICU's Traditional-Simplified rule set is a
 * plain ordered list "X > Y;" (X one character or a phrase; no contexts, sets, variables or
 * cursor marks). ICU tries, at each position, the rules whose X starts with the character there,
 * in order, and moves on past the match. Hence, exactly:
 *   - a character that occurs in no X ("trigger" bitmap) is copied unchanged, and no rule can
 *     match across it;
 *   - at a trigger that starts no multi-character X ("phrase" bitmap) only its single-character
 *     rule can apply: its result depends on that character alone and is memoized per
 *     normalizer;
 *   - at a character that starts a phrase X, but where none of its phrases follows in the
 *     text, again only the single-character rule can apply (memo);
 *   - where a phrase does follow, the rest of the run of triggers goes through utrans as one
 *     piece (a piece ends where the run does, at the latest after T2S_PIECE/2 code points).
 * The rules are read once per process with utrans_toRules; if they are ever not of that plain
 * form, every Han character counts as a phrase start, i.e. all Han runs go through utrans
 * (correct, only slower). tests/check_normalize.c compares the result with utrans over whole
 * lines of real Traditional text. */
#define T2S_TRIGGER_LIMIT 0x40000
static uint8_t t2s_trigger[T2S_TRIGGER_LIMIT / 8];   /* bit per code point in some X */
static uint8_t t2s_phrase[T2S_TRIGGER_LIMIT / 8];    /* bit per first code point of a phrase X */
static int t2s_trigger_plain;   /* 1: the bitmaps and the phrase table are exact */

/* The phrase rules' left sides, sorted by first code point (built once, kept for the process). */
typedef struct t2s_phrase_entry {
    int32_t first;
    uint32_t off, len;   /* code points in t2s_phrase_cps */
} t2s_phrase_entry;
static t2s_phrase_entry *t2s_phrases;
static size_t t2s_n_phrases;
static int32_t *t2s_phrase_cps;

static int phrase_cmp(const void *a, const void *b)
{
    int32_t x = ((const t2s_phrase_entry *)a)->first, y = ((const t2s_phrase_entry *)b)->first;
    return (x > y) - (x < y);
}

static void t2s_trigger_init(void)
{
    UChar id[32];
    UParseError pe;
    UErrorCode st = U_ZERO_ERROR;
    u_uastrcpy(id, "Traditional-Simplified");
    UTransliterator *t = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, &pe, &st);
    if (U_FAILURE(st)) return;
    int32_t n = utrans_toRules(t, 0, NULL, 0, &st);
    st = U_ZERO_ERROR;
    UChar *rules = malloc(((size_t)n + 1) * sizeof(UChar));
    if (rules) n = utrans_toRules(t, 0, rules, n + 1, &st);
    utrans_close(t);
    if (!rules || U_FAILURE(st)) {
        free(rules);
        return;
    }
    int plain = n > 0;
    /* at most n phrases of at most n code points in all */
    t2s_phrases = malloc(((size_t)n + 1) * sizeof *t2s_phrases);
    t2s_phrase_cps = malloc(((size_t)n + 1) * sizeof *t2s_phrase_cps);
    if (!t2s_phrases || !t2s_phrase_cps) plain = 0;
    size_t ncps = 0;
    for (int32_t i = 0; i < n && plain;) {
        /* one rule: LHS (code points >= U+2E80) " > " RHS ";" "\n" */
        int lhs = 0;
        size_t start = ncps;
        while (i < n && rules[i] != ' ') {
            UChar32 c;
            U16_NEXT(rules, i, n, c);
            if (c < 0x2e80 || c >= T2S_TRIGGER_LIMIT) plain = 0;
            else t2s_trigger[c >> 3] |= (uint8_t)(1u << (c & 7));
            t2s_phrase_cps[ncps++] = c;
            lhs++;
        }
        if (lhs > 1 && plain) {
            int32_t first = t2s_phrase_cps[start];
            t2s_phrase[first >> 3] |= (uint8_t)(1u << (first & 7));
            t2s_phrases[t2s_n_phrases++] = (t2s_phrase_entry){first, (uint32_t)start, (uint32_t)lhs};
        } else {
            ncps = start;
        }
        if (!lhs || i + 3 > n || rules[i] != ' ' || rules[i + 1] != '>' || rules[i + 2] != ' ') {
            plain = 0;
            break;
        }
        i += 3;
        while (i < n && rules[i] != ';') {
            if (rules[i] < 0x80) plain = 0;  /* syntax (quotes, escapes, contexts) in the output */
            i++;
        }
        if (i >= n) plain = 0;
        i++;
        while (i < n && (rules[i] == '\n' || rules[i] == '\r')) i++;
    }
    free(rules);
    if (plain) qsort(t2s_phrases, t2s_n_phrases, sizeof *t2s_phrases, phrase_cmp);
    t2s_trigger_plain = plain;
}

/* 1 if a phrase rule's left side starts at c[i] (c has len code points). */
static int phrase_at(const int32_t *c, size_t i, size_t len)
{
    if (!t2s_trigger_plain) return 1;
    size_t lo = 0, hi = t2s_n_phrases;
    while (lo < hi) {   /* first entry with first >= c[i] */
        size_t mid = (lo + hi) / 2;
        if (t2s_phrases[mid].first < c[i]) lo = mid + 1;
        else hi = mid;
    }
    for (size_t k = lo; k < t2s_n_phrases && t2s_phrases[k].first == c[i]; k++) {
        const t2s_phrase_entry *e = &t2s_phrases[k];
        if (e->len <= len - i && memcmp(c + i, t2s_phrase_cps + e->off, e->len * sizeof(int32_t)) == 0)
            return 1;
    }
    return 0;
}

static int is_trigger(int32_t c)
{
    if (!t2s_trigger_plain) return is_han(c);
    return c >= 0 && c < T2S_TRIGGER_LIMIT && (t2s_trigger[c >> 3] >> (c & 7)) & 1;
}

static int is_phrase_start(int32_t c)
{
    if (!t2s_trigger_plain) return is_han(c);
    return c >= 0 && c < T2S_TRIGGER_LIMIT && (t2s_phrase[c >> 3] >> (c & 7)) & 1;
}

/* Append the single-character transliteration of trigger `c` to n->t2s at *o, from the memo. */
static gyro_status t2s_single(gyro_normalizer *n, int32_t c, size_t *o)
{
    t2s_memo_entry *e = &n->memo[(uint32_t)c % T2S_MEMO];
    if (e->key != c) {
        size_t start = *o;
        gyro_status s = t2s_piece(n, &c, 1, o);
        if (s) return s;
        size_t k = *o - start;
        if (k > sizeof e->out / sizeof e->out[0]) return GYRO_OK;   /* too long to memoize */
        e->key = c;
        e->n = (uint8_t)k;
        memcpy(e->out, n->t2s + start, k * sizeof(int32_t));
        return GYRO_OK;
    }
    gyro_status s = grow(&n->t2s, &n->t2s_cap, *o + e->n + 1, sizeof(int32_t));
    if (s) return s;
    memcpy(n->t2s + *o, e->out, e->n * sizeof(int32_t));
    *o += e->n;
    return GYRO_OK;
}

/* Step 4: Traditional → Simplified over c[0..len) as described above. Result in n->t2s. */
static gyro_status t2s(gyro_normalizer *n, const int32_t *c, size_t len, size_t *out_len)
{
    gyro_status s;
    if ((s = grow(&n->t2s, &n->t2s_cap, len + 1, sizeof(int32_t)))) return s;
    size_t o = 0, i = 0;
    while (i < len) {
        if (!is_trigger(c[i])) {
            if (o + 1 > n->t2s_cap && (s = grow(&n->t2s, &n->t2s_cap, o + 1, sizeof(int32_t)))) return s;
            n->t2s[o++] = c[i++];
            continue;
        }
        if (!is_phrase_start(c[i]) || !phrase_at(c, i, len)) {
            if ((s = t2s_single(n, c[i], &o))) return s;
            i++;
            continue;
        }
        size_t end = i + 1;
        while (end < len && end - i < T2S_PIECE / 2 && is_trigger(c[end])) end++;
        if ((s = t2s_piece(n, c + i, end - i, &o))) return s;
        i = end;
    }
    *out_len = o;
    return GYRO_OK;
}

static int is_space(int32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
           c == 0x205f || c == 0x3000;
}

static int is_line_break(int32_t c)
{
    return (c >= 0x0a && c <= 0x0d) || c == 0x85 || c == 0x2028 || c == 0x2029;
}

/* Scripts written without spaces between words: Han, kana, CJK punctuation, full-width forms. */
static int is_cjk(int32_t c)
{
    return is_han(c) || (c >= 0x3000 && c <= 0x30ff) || (c >= 0xff00 && c <= 0xffef) ||
           (c >= 0x2e80 && c <= 0x2fdf) || (c >= 0x31c0 && c <= 0x31ff);
}

/* Step 5: drop controls, fold whitespace, encode to n->text. A whitespace run holding a line
 * break between two CJK characters is dropped instead of becoming a space: Chinese text wraps
 * lines without spaces (a paragraph "很难避免\n的人" is "很难避免的人"). */
static gyro_status clean_encode(gyro_normalizer *n, const int32_t *c, size_t len, size_t *out_len)
{
    gyro_status s;
    if ((s = grow(&n->text, &n->text_cap, 4 * len + 1, 1))) return s;
    size_t o = 0;
    int pending = 0, pending_break = 0;
    int32_t prev = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t x = c[i];
        if (n->opt.fold_whitespace && is_space(x)) {
            if (o > 0) {
                pending = 1;
                pending_break |= is_line_break(x);
            }
            continue;
        }
        if (n->opt.strip_controls && (x < 0x20 || (x >= 0x7f && x <= 0x9f) || x == 0xfeff))
            continue;
        if (pending) {
            if (!(pending_break && is_cjk(prev) && is_cjk(x))) n->text[o++] = ' ';
            pending = pending_break = 0;
        }
        o += gyro_utf8_encode(n->text + o, x);
        prev = x;
    }
    n->text[o] = '\0';
    *out_len = o;
    return GYRO_OK;
}

/* Grapheme_Cluster_Break=Other, not Extended_Pictographic, not Prepend: a boundary always lies
 * between two such code points (UAX #29 GB999). */
static int seg_simple(int32_t c)
{
    return (c >= 0x20 && c <= 0x7e) || (c >= 0x4e00 && c <= 0x9fff) ||
           (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x3001 && c <= 0x3003) ||
           (c >= 0x3008 && c <= 0x3011);
}

static void add_cluster(gyro_normalizer *n, size_t *o, size_t *k, size_t from, size_t to)
{
    n->chars[(*k)++] = n->cbuf + *o;
    memcpy(n->cbuf + *o, n->text + from, to - from);
    *o += to - from;
    n->cbuf[(*o)++] = '\0';
}

/* Clusters of the stretch text[from..to) with the ICU break iterator. */
static gyro_status segment_icu(gyro_normalizer *n, UText *ut, size_t *o, size_t *k, size_t from,
                               size_t to)
{
    UErrorCode st = U_ZERO_ERROR;
    utext_openUTF8(ut, n->text + from, (int64_t)(to - from), &st);
    ubrk_setUText(n->brk, ut, &st);
    if (U_FAILURE(st))
        return gyro_error_set(GYRO_ERR_INTERNAL, "normalize: ICU break iterator: %s", u_errorName(st));
    int32_t prev = ubrk_first(n->brk);
    for (int32_t b = ubrk_next(n->brk); b != UBRK_DONE; b = ubrk_next(n->brk)) {
        add_cluster(n, o, k, from + (size_t)prev, from + (size_t)b);
        prev = b;
    }
    return GYRO_OK;
}

/* Step 6: grapheme clusters of n->text[0..len) into n->cbuf / n->chars: cut at certain
 * boundaries, ICU inside the stretches of more than one code point between them. */
static gyro_status segment(gyro_normalizer *n, size_t len, size_t *n_chars)
{
    gyro_status s;
    *n_chars = 0;
    if (len == 0) return GYRO_OK;
    if ((s = grow(&n->cbuf, &n->cbuf_cap, 2 * len + 1, 1)) ||
        (s = grow(&n->chars, &n->chars_cap, len + 1, sizeof(char *))))
        return s;
    UText ut = UTEXT_INITIALIZER;
    size_t o = 0, k = 0, start = 0, count = 0, i = 0;
    int prev_simple = 0;
    const uint8_t *t = (const uint8_t *)n->text;
    while (i < len) {
        int32_t c;
        size_t w = gyro_utf8_decode(t + i, len - i, &c);  /* the text is valid UTF-8 */
        int simple = seg_simple(c);
        if (count > 0 && prev_simple && simple) {
            if (count == 1) add_cluster(n, &o, &k, start, i);
            else if ((s = segment_icu(n, &ut, &o, &k, start, i))) break;
            start = i;
            count = 0;
        }
        count++;
        prev_simple = simple;
        i += w;
    }
    if (!s) {
        if (count == 1) add_cluster(n, &o, &k, start, len);
        else if (count > 1) s = segment_icu(n, &ut, &o, &k, start, len);
    }
    utext_close(&ut);
    *n_chars = k;
    return s;
}

/* ---- the whole normalization -------------------------------------------------------------- */

gyro_status gyro_normalize_text(gyro_normalizer *n, const char *in, size_t len, gyro_normalized *out)
{
    if (!n || !out || (!in && len)) return gyro_error_set(GYRO_ERR_USAGE, "normalize: NULL argument");
    memset(out, 0, sizeof *out);
    gyro_status s;
    size_t ncp = 0, olen = 0;
    uint32_t repairs = 0;
    if ((s = decode(n, (const uint8_t *)in, len, &ncp, &olen, &repairs))) return s;
    if ((s = grow(&n->text, &n->text_cap, 1, 1))) return s;
    out->repairs = repairs;
    if (n->opt.invalid == GYRO_INVALID_SKIP && repairs) {
        n->orig[0] = '\0';
        n->text[0] = '\0';
        out->original = n->orig;
        out->text = n->text;
        out->chars = n->chars;
        out->skipped = 1;
        return GYRO_OK;
    }
    int32_t *c = n->cps;
    size_t clen = ncp;
    if (n->opt.strip_ansi) clen = strip_ansi(c, clen);
    if ((n->opt.nfkc || n->opt.case_fold) && !(n->opt.nfkc && nf_fast(c, clen, n->opt.case_fold))) {
        if ((s = nfkc(n, c, clen, &clen))) return s;
        c = n->nf;
    }
    if (n->opt.t2s) {
        size_t k = 0;
        while (k < clen && !is_trigger(c[k])) k++;
        if (k < clen) {
            if ((s = t2s(n, c, clen, &clen))) return s;
            c = n->t2s;
        }
    }
    size_t tlen, nchars = 0;
    if ((s = clean_encode(n, c, clen, &tlen))) return s;
    if (n->opt.segment && (s = segment(n, tlen, &nchars))) return s;
    out->original = n->orig;
    out->original_len = olen;
    out->text = n->text;
    out->text_len = tlen;
    out->chars = n->chars;
    out->n_chars = nchars;
    return GYRO_OK;
}
