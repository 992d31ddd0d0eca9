/* The EASY family's decision (two-phase holds) on a copy of the availability profile: the FCFS pass, the head
 * job's reservation (its earliest fit and BB placement, or a kept one), then the backfilling pass (a fit at the
 * decision's time per job, the starts taken in the copy, a wait reason per job passed over). Built and driven by
 * burstbuffer/schedulers/_easy_native.py, which names the Python function each function here mirrors
 * (Kopanski & Rzadca, Euro-Par 2021, Algorithm 1 lines 12-17; the placement rule of
 * burstbuffer/schedulers/placement.py, §3.1/§4.1). */
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct {
    int32_t W, B, n, cap, P;                   /* mask words, BB nodes, breakpoints, rows, compute ids */
    double *keys; uint64_t *mask; int32_t *cnt; int64_t *bb;    /* the profile from now (row 0 = now) */
    const int32_t *pref; const int32_t *prow;  /* preference lists (rows of B BB indices, -1 = end); each compute
                                                  id's row (the ids of a chassis share one) */
    int32_t J, reserve_bb, free0, gidx;        /* queued jobs; the head's reservation holds BB; free processors
                                                  before the decision; the kept reservation's job (-1: none) */
    double gstart, gend;                       /* the kept reservation's window */
    int32_t head, found, given, asked, nseq;   /* out: head (-1: none), a reservation held, the kept one used, a
                                                  backfilling fit asked, number of starts */
    double rstart, rend; uint64_t *rmask; int64_t *rbb; int32_t *rplace;      /* out: the reservation */
    int32_t *status; int32_t *seq; uint64_t *chosen; int32_t *place; int32_t *off;  /* out per job; starts in order */
    uint64_t *wm; int64_t *wa; int64_t *left; int64_t *nbb; int64_t *take;   /* scratch */
} easy_t;

static int popc(const uint64_t *m, int W) {
    int c = 0;
    for (int w = 0; w < W; w++) c += __builtin_popcountll(m[w]);
    return c;
}

/* placement.bb_room */
static int bb_room(const int64_t *f, int B, int64_t need, int32_t res) {
    int64_t n = 0;
    for (int b = 0; b < B; b++) { n += f[b] / need; if (n >= res) return 1; }
    return 0;
}

static int alone(const easy_t *e, int q, int32_t res, int64_t need) {
    return e->cnt[q] >= res && (need <= 0 || bb_room(e->bb + (int64_t)q * e->B, e->B, need, res));
}

/* placement.window_fit over the breakpoints covering [now, end): 1 and (wm, wa) if the job fits */
static int window_fit(easy_t *e, double end, int32_t res, int64_t need) {
    const int W = e->W, B = e->B;
    memcpy(e->wm, e->mask, sizeof(uint64_t) * W);
    memcpy(e->wa, e->bb, sizeof(int64_t) * B);
    for (int q = 1; q < e->n && e->keys[q] < end; q++) {
        const uint64_t *mq = e->mask + (int64_t)q * W;
        for (int x = 0; x < W; x++) e->wm[x] &= mq[x];
        if (need > 0) {
            const int64_t *bq = e->bb + (int64_t)q * B;
            for (int b = 0; b < B; b++) if (bq[b] < e->wa[b]) e->wa[b] = bq[b];
        }
    }
    if (popc(e->wm, W) < res) return 0;
    return need <= 0 || bb_room(e->wa, B, need, res);
}

/* placement.earliest_window from row 0 (t0 = now): 1 and (*tout, wm, wa) if found */
static int earliest(easy_t *e, int32_t res, double wall, int64_t need, double *tout) {
    const int W = e->W, B = e->B, n = e->n;
    int i = 0;
    while (i < n) {
        if (!alone(e, i, res, need)) { i++; continue; }
        double t = e->keys[i], end = t + wall;
        memcpy(e->wm, e->mask + (int64_t)i * W, sizeof(uint64_t) * W);
        int j = i + 1, nxt = -1;
        while (j < n && e->keys[j] < end) {
            if (!alone(e, j, res, need)) { nxt = j + 1; break; }
            const uint64_t *mj = e->mask + (int64_t)j * W;
            for (int x = 0; x < W; x++) e->wm[x] &= mj[x];
            if (popc(e->wm, W) < res) { nxt = i + 1; break; }
            j++;
        }
        if (nxt >= 0) { i = nxt; continue; }
        memcpy(e->wa, e->bb + (int64_t)i * B, sizeof(int64_t) * B);
        if (need > 0 && j > i + 1) {
            for (int q = i + 1; q < j; q++) {
                const int64_t *bq = e->bb + (int64_t)q * B;
                for (int b = 0; b < B; b++) if (bq[b] < e->wa[b]) e->wa[b] = bq[b];
            }
            if (!bb_room(e->wa, B, need, res)) { i++; continue; }
        }
        *tout = t;
        return 1;
    }
    return 0;
}

/* placement.lowest_mask + placement.place_bb: the `res` lowest ids of wm into `out`, each id's BB index into
 * `place` (need > 0), the bytes per BB index into e->take; -1 if a share finds no room */
static int choose(easy_t *e, int32_t res, int64_t need, uint64_t *out, int32_t *place) {
    const int W = e->W, B = e->B;
    int32_t k = 0;
    memset(e->take, 0, sizeof(int64_t) * B);
    memcpy(e->left, e->wa, sizeof(int64_t) * B);
    for (int x = 0; x < W; x++) {
        uint64_t y = e->wm[x], o = 0;
        while (y && k < res) {
            uint64_t low = y & (~y + 1);
            y ^= low;
            o |= low;
            if (need > 0) {
                int p = 64 * x + __builtin_ctzll(low);
                const int32_t *order = e->pref + (int64_t)e->prow[p] * B;
                int q = 0;
                for (; q < B && order[q] >= 0; q++)
                    if (e->left[order[q]] >= need) break;
                if (q == B || order[q] < 0) return -1;
                e->left[order[q]] -= need;
                e->take[order[q]] += need;
                place[k] = order[q];
            }
            k++;
        }
        out[x] = o;
    }
    return 0;
}

/* AvailabilityProfile._split: a breakpoint at t (finite) holding the value in force there; its row */
static int split(easy_t *e, double t) {
    int lo = 0, hi = e->n;                     /* first row with key > t */
    while (lo < hi) { int mid = (lo + hi) >> 1; if (e->keys[mid] <= t) lo = mid + 1; else hi = mid; }
    int i = lo - 1;
    if (i >= 0 && e->keys[i] == t) return i;
    if (isinf(t) || e->n >= e->cap) return e->n;
    const int W = e->W, B = e->B, m = e->n - lo;
    memmove(e->keys + lo + 1, e->keys + lo, sizeof(double) * m);
    memmove(e->mask + (int64_t)(lo + 1) * W, e->mask + (int64_t)lo * W, sizeof(uint64_t) * W * m);
    memmove(e->cnt + lo + 1, e->cnt + lo, sizeof(int32_t) * m);
    memmove(e->bb + (int64_t)(lo + 1) * B, e->bb + (int64_t)lo * B, sizeof(int64_t) * B * m);
    e->keys[lo] = t;
    memcpy(e->mask + (int64_t)lo * W, e->mask + (int64_t)i * W, sizeof(uint64_t) * W);
    e->cnt[lo] = e->cnt[i];
    memcpy(e->bb + (int64_t)lo * B, e->bb + (int64_t)i * B, sizeof(int64_t) * B);
    e->n++;
    return lo;
}

/* AvailabilityProfile.reserve without its checks: take `m` and `bbv` (bytes per BB index) over [start, end) */
static void take(easy_t *e, double start, double end, const uint64_t *m, const int64_t *bbv) {
    const int W = e->W, B = e->B;
    int a = split(e, start);
    split(e, end);
    for (int q = a; q < e->n && e->keys[q] < end; q++) {
        uint64_t *mq = e->mask + (int64_t)q * W;
        for (int x = 0; x < W; x++) mq[x] &= ~m[x];
        e->cnt[q] = popc(mq, W);
        int64_t *bq = e->bb + (int64_t)q * B;
        for (int b = 0; b < B; b++) bq[b] -= bbv[b];
    }
}

/* ProfileScheduler._note_wait (no queue limits): 0 Resources, 1 BurstBufferResources, 2 Priority,
 * 3 Reservation (a reservation held), 4 the policy's blocked reason */
static int32_t reason(const easy_t *e, const int64_t *bb0, int32_t nfree, int32_t res, int64_t need) {
    if (res > e->free0) return 0;
    if (need > 0 && !bb_room(bb0, e->B, need, res)) return 1;
    if (res > nfree || (need > 0 && !bb_room(e->nbb, e->B, need, res))) return 2;
    return e->found ? 3 : 4;
}

/* a start now of job k fitting the window (wm, wa): its ids and BB nodes chosen, taken in the profile */
static int start(easy_t *e, int k, int32_t res, int64_t need, double end, int32_t *nfree) {
    uint64_t *ck = e->chosen + (int64_t)k * e->W;
    if (choose(e, res, need, ck, e->place + e->off[k]) < 0) return -1;
    take(e, e->keys[0], end, ck, e->take);
    *nfree -= res;
    for (int b = 0; b < e->B; b++) e->nbb[b] -= e->take[b];
    e->status[k] = 5;
    e->seq[e->nseq++] = k;
    return 0;
}

/* EasyBackfilling._schedule (two-phase, no queues, no extra nodes) on a copy of the profile: the FCFS pass over
 * the queue in its order (Fcfs._fcfs_pass), the head's reservation (ProfileScheduler._reserve: the kept one
 * `gidx` if it is the head and nothing started, else its earliest fit), the backfilling pass over the other jobs in
 * the order `perm` (ProfileScheduler._backfill; NULL: the queue's). In: the n breakpoints (keys, masks, counts, BB
 * rows), the jobs (res, walltime, BB per processor), bb0 (free BB before the decision), the kept reservation's
 * masks and BB (gmask, gbb). Out: status per job (-1 not looked at, 0-4 its wait reason (`reason`), 5 started),
 * the starts in order (seq), each start's ids (chosen) and BB nodes (place, from off[k], the processors of the jobs
 * before k), the reservation.
 * Returns 0, or -1 if a BB placement failed after its feasibility check. */
int easy_decide(easy_t *e, const double *keys, const uint64_t *mask, const int32_t *cnt, const int64_t *bb,
                const int32_t *res, const double *wall, const int64_t *need, const int32_t *perm,
                const int64_t *bb0, const uint64_t *gmask, const int64_t *gbb) {
    const int W = e->W, B = e->B, J = e->J;
    memcpy(e->keys, keys, sizeof(double) * e->n);
    memcpy(e->mask, mask, sizeof(uint64_t) * W * e->n);
    memcpy(e->cnt, cnt, sizeof(int32_t) * e->n);
    memcpy(e->bb, bb, sizeof(int64_t) * B * e->n);
    const double now = e->keys[0];
    int32_t nfree = e->cnt[0];                  /* free now without the reservation, after the starts */
    memcpy(e->nbb, e->bb, sizeof(int64_t) * B);
    e->head = -1; e->found = e->given = e->asked = e->nseq = 0;
    e->off[0] = 0;
    for (int k = 0; k < J; k++) { e->status[k] = -1; e->off[k + 1] = e->off[k] + res[k]; }
    for (int k = 0; k < J; k++) {               /* FCFS */
        const double end = now + wall[k];
        if (!window_fit(e, end, res[k], need[k])) {
            e->status[k] = reason(e, bb0, nfree, res[k], need[k]);
            e->head = k;
            break;
        }
        if (start(e, k, res[k], need[k], end, &nfree) < 0) return -1;
    }
    const int h = e->head;
    if (h < 0) return 0;
    if (e->gidx == h && e->nseq == 0) {          /* the kept reservation */
        e->found = e->given = 1;
        e->rstart = e->gstart; e->rend = e->gend;
        memcpy(e->rmask, gmask, sizeof(uint64_t) * W);
        memcpy(e->rbb, gbb, sizeof(int64_t) * B);
    } else {
        const int64_t hn = e->reserve_bb ? need[h] : 0;
        double t;
        e->found = earliest(e, res[h], wall[h], hn, &t);
        if (e->found) {
            if (choose(e, res[h], hn, e->rmask, e->rplace) < 0) return -1;
            memcpy(e->rbb, e->take, sizeof(int64_t) * B);
            e->rstart = t;
            e->rend = t + wall[h];
        }
    }
    if (e->found) take(e, e->rstart, e->rend, e->rmask, e->rbb);
    int32_t free_procs = e->cnt[0];
    for (int q = 0; q < J; q++) {                /* BACKFILL */
        const int k = perm ? perm[q] : q;
        if (k <= h) continue;
        if (free_procs == 0) break;
        if (res[k] > free_procs) { e->status[k] = reason(e, bb0, nfree, res[k], need[k]); continue; }
        e->asked = 1;
        const double end = now + wall[k];
        if (!window_fit(e, end, res[k], need[k])) { e->status[k] = reason(e, bb0, nfree, res[k], need[k]); continue; }
        if (start(e, k, res[k], need[k], end, &nfree) < 0) return -1;
        free_procs -= res[k];
    }
    return 0;
}
