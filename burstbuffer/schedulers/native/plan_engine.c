
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct {
    int32_t W, B, cap, n, J, P, depth, stash_c, stash_len, stash_valid;
    double alpha, now, horizon;
    double *keys; uint64_t *mask; int32_t *cnt; int64_t *bb; int64_t *tb;
    int32_t *res; double *wall; int64_t *need; int64_t *tot; int64_t *qa; double *sub;
    int32_t *pref; uint64_t *gmask;
    /* applied plan, one entry per position */
    int32_t *perm; int8_t *placed; double *start; uint64_t *chosen; int64_t *bbfree; int64_t *bbused;
    double *cum; int32_t *u_lo; int32_t *u_hi; int8_t *u_ins_s; int8_t *u_ins_e;
    /* stash for revert */
    int32_t *s_perm; int8_t *s_placed; double *s_start; uint64_t *s_chosen; int64_t *s_bbfree;
    int64_t *s_bbused; double *s_cum;
    /* scratch */
    uint64_t *wm; int64_t *wa; int64_t *left;
    /* three-phase model: stage estimate per job (0 = two-phase placement), zero mask / zero BB,
       undo record of a staged job's BB hold */
    double *stg; uint64_t *zm; int64_t *zu; int32_t *v_lo; int32_t *v_hi; int8_t *v_ins_s; int8_t *v_ins_e;
    int32_t *pbn; int32_t *pbb; int32_t pfill, pln, plb;
} eng_t;

static int upper_bound(const double *a, int n, double x) {  /* first index with a[i] > x */
    int lo = 0, hi = n;
    while (lo < hi) { int mid = (lo + hi) >> 1; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
    return lo;
}
static int lower_bound_from(const double *a, int lo, int n, double x) {  /* first a[i] >= x */
    int hi = n;
    while (lo < hi) { int mid = (lo + hi) >> 1; if (a[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
}
static int chunks_ok(const int64_t *f, int B, int64_t need, int32_t res) {
    int64_t n = 0;
    for (int b = 0; b < B; b++) { n += f[b] / need; if (n >= res) return 1; }
    return 0;
}
static int alone(const eng_t *e, int i, int32_t res, int64_t need, int64_t tot, int64_t qa) {
    if (e->cnt[i] < res) return 0;
    if (need) {
        int64_t t = e->tb[i];
        if (t < tot) return 0;
        if (t < qa && !chunks_ok(e->bb + (int64_t)i * e->B, e->B, need, res)) return 0;
    }
    return 1;
}
static int popc(const uint64_t *m, int W) {
    int c = 0;
    for (int w = 0; w < W; w++) c += __builtin_popcountll(m[w]);
    return c;
}
/* earliest fit: 1 and (*t, e->wm, e->wa) if found */
static int fit(eng_t *e, int k, double t0, double *tout) {
    const int W = e->W, B = e->B, n = e->n;
    const int32_t res = e->res[k]; const double w = e->wall[k];
    const int64_t need = e->need[k], tot = e->tot[k], qa = e->qa[k];
    uint64_t *m = e->wm; int64_t *A = e->wa;
    int i = upper_bound(e->keys, n, t0) - 1;
    const int first = i;
    while (i < n) {
        if (!alone(e, i, res, need, tot, qa)) { i++; continue; }
        double t = (i == first) ? t0 : e->keys[i];
        double end = t + w;
        memcpy(m, e->mask + (int64_t)i * W, sizeof(uint64_t) * W);
        int j = i + 1, nxt = -1;
        while (j < n && e->keys[j] < end) {
            if (!alone(e, j, res, need, tot, qa)) { nxt = j + 1; break; }
            const uint64_t *mj = e->mask + (int64_t)j * W;
            for (int x = 0; x < W; x++) m[x] &= mj[x];
            if (popc(m, W) < res) { nxt = i + 1; break; }
            j++;
        }
        if (nxt >= 0) { i = nxt; continue; }
        if (!need) { memset(A, 0, sizeof(int64_t) * B); *tout = t; return 1; }
        memcpy(A, e->bb + (int64_t)i * B, sizeof(int64_t) * B);
        for (int q = i + 1; q < j; q++) {
            const int64_t *bq = e->bb + (int64_t)q * B;
            for (int b = 0; b < B; b++) if (bq[b] < A[b]) A[b] = bq[b];
        }
        if (chunks_ok(A, B, need, res)) { *tout = t; return 1; }
        i++;
    }
    return 0;
}
/* three-phase model: placement.staged_bb_start */
static double bb_start(const eng_t *e, double t, double s) {
    if (t == e->now + s) return e->now;
    double b = t - s;
    return b > e->now ? b : e->now;
}
/* can breakpoint q alone host job k's BB shares (= placement.bb_room, with alone's shortcuts) */
static int bb_alone(const eng_t *e, int q, int32_t res, int64_t need, int64_t tot, int64_t qa) {
    int64_t t = e->tb[q];
    if (t < tot) return 0;
    if (t < qa && !chunks_ok(e->bb + (int64_t)q * e->B, e->B, need, res)) return 0;
    return 1;
}
/* e->pbn[q] / e->pbb[q]: the last breakpoint ≤ q (and ≥ the one in force at now) that alone cannot host job
   k's nodes / BB shares (−1: none); filled lazily up to q (the windows only move right during a fit) */
static void fill_to(eng_t *e, int k, int q) {
    const int32_t res = e->res[k]; const int64_t need = e->need[k], tot = e->tot[k], qa = e->qa[k];
    for (int p = e->pfill + 1; p <= q; p++) {
        if (e->cnt[p] < res) e->pln = p;
        if (!bb_alone(e, p, res, need, tot, qa)) e->plb = p;
        e->pbn[p] = e->pln; e->pbb[p] = e->plb;
    }
    if (q > e->pfill) e->pfill = q;
}
/* placement._staged_fit: 1 and (e->wm, e->wa) if job k fits with its nodes from t; else 0 and *hint */
static int staged_check(eng_t *e, int k, double t, double *hint) {
    const int W = e->W, B = e->B, n = e->n;
    const int32_t res = e->res[k]; const double w = e->wall[k], s = e->stg[k];
    const int64_t need = e->need[k];
    uint64_t *m = e->wm; int64_t *A = e->wa;
    const double end = t + w;
    const int q0 = upper_bound(e->keys, n, t) - 1;
    const int q1 = lower_bound_from(e->keys, q0 + 1, n, end);
    fill_to(e, k, q1 - 1);
    int bad = e->pbn[q1 - 1];
    if (bad >= q0) { *hint = bad + 1 < n ? e->keys[bad + 1] : INFINITY; return 0; }
    const double b0 = bb_start(e, t, s), bend = end + s;
    const int r0 = upper_bound(e->keys, n, b0) - 1;
    const int r1 = lower_bound_from(e->keys, r0 + 1, n, bend);
    fill_to(e, k, r1 - 1);
    bad = e->pbb[r1 - 1];
    if (bad >= r0) { *hint = bad + 1 < n ? e->keys[bad + 1] + s : INFINITY; return 0; }
    memcpy(m, e->mask + (int64_t)q0 * W, sizeof(uint64_t) * W);
    for (int q = q0 + 1; q < q1; q++) {
        const uint64_t *mq = e->mask + (int64_t)q * W;
        for (int x = 0; x < W; x++) m[x] &= mq[x];
        if (popc(m, W) < res) { *hint = t; return 0; }
    }
    memcpy(A, e->bb + (int64_t)r0 * B, sizeof(int64_t) * B);
    for (int q = r0 + 1; q < r1; q++) {
        const int64_t *bq = e->bb + (int64_t)q * B;
        for (int b = 0; b < B; b++) if (bq[b] < A[b]) A[b] = bq[b];
    }
    if (!chunks_ok(A, B, need, res)) { *hint = t; return 0; }
    return 1;
}
/* placement.earliest_staged_window */
static int fit_staged(eng_t *e, int k, double *tout) {
    const int n = e->n; const double s = e->stg[k], t0 = e->now + s;
    int i = upper_bound(e->keys, n, t0), j = upper_bound(e->keys, n, e->now);
    e->pfill = j - 2; e->pln = -1; e->plb = -1;
    double t = t0, nxt = t0, hint;
    while (!isinf(t)) {
        if (t >= nxt) {
            if (staged_check(e, k, t, &hint)) { *tout = t; return 1; }
            nxt = hint;
        }
        while (i < n && e->keys[i] <= t) i++;
        while (j < n && e->keys[j] + s <= t) j++;
        double a = i < n ? e->keys[i] : INFINITY, b = j < n ? e->keys[j] + s : INFINITY;
        t = a < b ? a : b;
    }
    return 0;
}
static int is_staged(const eng_t *e, int k) { return e->stg[k] > 0.0 && e->need[k] > 0; }
/* lowest res ids of e->wm into out; BB bytes per node into used (from free A) */
static int choose(eng_t *e, int k, uint64_t *out, int64_t *used) {
    const int W = e->W, B = e->B;
    int32_t r = e->res[k]; const int64_t need = e->need[k];
    for (int x = 0; x < W; x++) {
        uint64_t v = e->wm[x], o = 0;
        while (v && r > 0) { uint64_t low = v & (~v + 1); o |= low; v ^= low; r--; }
        out[x] = o;
    }
    memset(used, 0, sizeof(int64_t) * B);
    if (!need) return 1;
    int fast = 1;
    for (int b = 0; b < B; b++) {
        int c = 0;
        for (int x = 0; x < W; x++) c += __builtin_popcountll(out[x] & e->gmask[(int64_t)b * W + x]);
        if (c) {
            if ((int64_t)c * need > e->wa[b]) { fast = 0; break; }
            used[b] = (int64_t)c * need;
        }
    }
    if (fast) return 1;
    memset(used, 0, sizeof(int64_t) * B);
    int64_t *left = e->left;
    memcpy(left, e->wa, sizeof(int64_t) * B);
    for (int x = 0; x < W; x++) {
        uint64_t v = out[x];
        while (v) {
            int bit = __builtin_ctzll(v);
            v &= v - 1;
            int p = x * 64 + bit;
            int ok = 0;
            if (p < e->P) {
                const int32_t *pr = e->pref + (int64_t)p * B;
                for (int q = 0; q < B && pr[q] >= 0; q++) {
                    int b = pr[q];
                    if (left[b] >= need) { left[b] -= need; used[b] += need; ok = 1; break; }
                }
            }
            if (!ok) return 0;
        }
    }
    return 1;
}
static void slot_copy(eng_t *e, int dst, int src) {
    const int W = e->W, B = e->B;
    e->keys[dst] = e->keys[src];
    memcpy(e->mask + (int64_t)dst * W, e->mask + (int64_t)src * W, sizeof(uint64_t) * W);
    e->cnt[dst] = e->cnt[src];
    memcpy(e->bb + (int64_t)dst * B, e->bb + (int64_t)src * B, sizeof(int64_t) * B);
    e->tb[dst] = e->tb[src];
}
static void slot_insert(eng_t *e, int at, int src_after_shift) {  /* open slot `at` */
    const int W = e->W, B = e->B, n = e->n;
    int cnt = n - at;
    memmove(e->keys + at + 1, e->keys + at, sizeof(double) * cnt);
    memmove(e->mask + (int64_t)(at + 1) * W, e->mask + (int64_t)at * W, sizeof(uint64_t) * W * cnt);
    memmove(e->cnt + at + 1, e->cnt + at, sizeof(int32_t) * cnt);
    memmove(e->bb + (int64_t)(at + 1) * B, e->bb + (int64_t)at * B, sizeof(int64_t) * B * cnt);
    memmove(e->tb + at + 1, e->tb + at, sizeof(int64_t) * cnt);
    e->n = n + 1;
    slot_copy(e, at, src_after_shift);
}
static void slot_delete(eng_t *e, int at) {
    const int W = e->W, B = e->B, n = e->n;
    int cnt = n - at - 1;
    memmove(e->keys + at, e->keys + at + 1, sizeof(double) * cnt);
    memmove(e->mask + (int64_t)at * W, e->mask + (int64_t)(at + 1) * W, sizeof(uint64_t) * W * cnt);
    memmove(e->cnt + at, e->cnt + at + 1, sizeof(int32_t) * cnt);
    memmove(e->bb + (int64_t)at * B, e->bb + (int64_t)(at + 1) * B, sizeof(int64_t) * B * cnt);
    memmove(e->tb + at, e->tb + at + 1, sizeof(int64_t) * cnt);
    e->n = n - 1;
}
static void apply_window(eng_t *e, int i, int hi, const uint64_t *pm, const int64_t *used, int64_t dt, int sign) {
    const int W = e->W, B = e->B;
    for (int k = i; k < hi; k++) {
        uint64_t *mk = e->mask + (int64_t)k * W;
        int c = 0;
        for (int x = 0; x < W; x++) {
            if (sign < 0) mk[x] &= ~pm[x]; else mk[x] |= pm[x];
            c += __builtin_popcountll(mk[x]);
        }
        e->cnt[k] = c;
        int64_t *bk = e->bb + (int64_t)k * B;
        for (int b = 0; b < B; b++) bk[b] += sign * used[b];
        e->tb[k] += sign * dt;
    }
}
/* take pm / used / dt over [s, end); undo record into (*ulo, *uhi, *uis, *uie) */
static void take(eng_t *e, double s, double end, const uint64_t *pm, const int64_t *used, int64_t dt,
                 int32_t *ulo, int32_t *uhi, int8_t *uis, int8_t *uie) {
    int lo = upper_bound(e->keys, e->n, s) - 1;
    int i = lo, ins_s = 0, ins_e = 0;
    if (e->keys[lo] != s) { i = lo + 1; slot_insert(e, i, lo); e->keys[i] = s; ins_s = 1; }
    int hi = lower_bound_from(e->keys, i, e->n, end);
    if (!isinf(end) && (hi == e->n || e->keys[hi] != end)) {
        slot_insert(e, hi, hi - 1); e->keys[hi] = end; ins_e = 1;
    }
    apply_window(e, i, hi, pm, used, dt, -1);
    *ulo = i; *uhi = hi; *uis = ins_s; *uie = ins_e;
}
static void give(eng_t *e, const uint64_t *pm, const int64_t *used, int64_t dt, int i, int hi, int ins_s, int ins_e) {
    apply_window(e, i, hi, pm, used, dt, +1);
    if (ins_e) slot_delete(e, hi);
    if (ins_s) slot_delete(e, i);
}
/* reserve at depth d (placement already in the d-th entries), nodes from t; a staged job (three-phase
   model) also holds its BB from its stage-in start to its stage-out end (PlanEngine._hold) */
static void reserve(eng_t *e, int d, double t) {
    int k = e->perm[d];
    const double end = t + e->wall[k];
    const uint64_t *pm = e->chosen + (int64_t)d * e->W; const int64_t *used = e->bbused + (int64_t)d * e->B;
    const int64_t dt = (int64_t)e->res[k] * e->need[k];
    if (is_staged(e, k)) {
        const double s = e->stg[k];
        take(e, bb_start(e, t, s), end + s, e->zm, used, dt, e->v_lo + d, e->v_hi + d, e->v_ins_s + d, e->v_ins_e + d);
        take(e, t, end, pm, e->zu, 0, e->u_lo + d, e->u_hi + d, e->u_ins_s + d, e->u_ins_e + d);
    } else {
        take(e, t, end, pm, used, dt, e->u_lo + d, e->u_hi + d, e->u_ins_s + d, e->u_ins_e + d);
    }
}
static void unreserve(eng_t *e, int d) {
    if (!e->placed[d]) return;
    int k = e->perm[d];
    const uint64_t *pm = e->chosen + (int64_t)d * e->W; const int64_t *used = e->bbused + (int64_t)d * e->B;
    const int64_t dt = (int64_t)e->res[k] * e->need[k];
    if (is_staged(e, k)) {
        give(e, pm, e->zu, 0, e->u_lo[d], e->u_hi[d], e->u_ins_s[d], e->u_ins_e[d]);
        give(e, e->zm, used, dt, e->v_lo[d], e->v_hi[d], e->v_ins_s[d], e->v_ins_e[d]);
    } else {
        give(e, pm, used, dt, e->u_lo[d], e->u_hi[d], e->u_ins_s[d], e->u_ins_e[d]);
    }
}
static void truncate_to(eng_t *e, int c) {
    while (e->depth > c) { e->depth--; unreserve(e, e->depth); }
}
static int extend(eng_t *e, const int32_t *perm, int J) {
    const int W = e->W, B = e->B;
    double cum = e->depth ? e->cum[e->depth - 1] : 0.0;
    for (int d = e->depth; d < J; d++) {
        int k = perm[d];
        double t, wait;
        e->perm[d] = k;
        const int st = is_staged(e, k);
        if (st ? fit_staged(e, k, &t) : fit(e, k, e->now, &t)) {
            if (!choose(e, k, e->chosen + (int64_t)d * W, e->bbused + (int64_t)d * B)) return -1;
            memcpy(e->bbfree + (int64_t)d * B, e->wa, sizeof(int64_t) * B);
            e->placed[d] = 1; e->start[d] = t;
            reserve(e, d, t);
            wait = (st ? bb_start(e, t, e->stg[k]) : t) - e->sub[k];
        } else {
            e->placed[d] = 0; e->start[d] = INFINITY;
            wait = e->horizon - e->sub[k];
        }
        if (wait < 0.0) wait = 0.0;
        cum += pow(wait, e->alpha);
        e->cum[d] = cum;
        e->depth = d + 1;
    }
    return 0;
}
int eng_apply(eng_t *e, const int32_t *perm) {
    const int J = e->J, W = e->W, B = e->B;
    int c = 0;
    while (c < e->depth && e->perm[c] == perm[c]) c++;
    int len = e->depth - c;
    memcpy(e->s_perm + c, e->perm + c, sizeof(int32_t) * len);
    memcpy(e->s_placed + c, e->placed + c, sizeof(int8_t) * len);
    memcpy(e->s_start + c, e->start + c, sizeof(double) * len);
    memcpy(e->s_chosen + (int64_t)c * W, e->chosen + (int64_t)c * W, sizeof(uint64_t) * W * len);
    memcpy(e->s_bbfree + (int64_t)c * B, e->bbfree + (int64_t)c * B, sizeof(int64_t) * B * len);
    memcpy(e->s_bbused + (int64_t)c * B, e->bbused + (int64_t)c * B, sizeof(int64_t) * B * len);
    memcpy(e->s_cum + c, e->cum + c, sizeof(double) * len);
    e->stash_c = c; e->stash_len = len; e->stash_valid = 1;
    truncate_to(e, c);
    return extend(e, perm, J);
}
int eng_revert(eng_t *e) {
    const int W = e->W, B = e->B;
    if (!e->stash_valid) return -1;
    e->stash_valid = 0;
    int c = e->stash_c, len = e->stash_len;
    truncate_to(e, c);
    for (int d = c; d < c + len; d++) {
        e->perm[d] = e->s_perm[d]; e->placed[d] = e->s_placed[d]; e->start[d] = e->s_start[d];
        memcpy(e->chosen + (int64_t)d * W, e->s_chosen + (int64_t)d * W, sizeof(uint64_t) * W);
        memcpy(e->bbfree + (int64_t)d * B, e->s_bbfree + (int64_t)d * B, sizeof(int64_t) * B);
        memcpy(e->bbused + (int64_t)d * B, e->s_bbused + (int64_t)d * B, sizeof(int64_t) * B);
        e->cum[d] = e->s_cum[d];
        if (e->placed[d]) reserve(e, d, e->start[d]);
        e->depth = d + 1;
    }
    return 0;
}
