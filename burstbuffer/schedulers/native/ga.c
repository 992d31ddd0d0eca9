
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Repair (keep the longest prefix of the selected jobs, in window order, that fits both capacities) of
   a chromosome (bit k-1-i = job i, so job 0 is the highest bit), and its objectives. */
static uint64_t repair(uint64_t x, int k, const int64_t *n, const int64_t *b, int64_t cn, int64_t cb,
                       int64_t *f1, int64_t *f2) {
    int64_t sn = 0, sb = 0;
    uint64_t keep = 0;
    while (x) {
#if defined(__GNUC__)
        int p = 63 - __builtin_clzll(x);                   /* highest set bit = next selected job */
#else
        int p = 63; while (!((x >> p) & 1)) p--;
#endif
        uint64_t bit = (uint64_t)1 << p;
        int i = k - 1 - p;
        if (sn + n[i] > cn || sb + b[i] > cb) break;      /* prefix sums only grow: the rest fails too */
        sn += n[i]; sb += b[i]; keep |= bit; x ^= bit;
    }
    *f1 = sn; *f2 = sb;
    return keep;
}

/* Levels of the R buffer rows: 2 = a later copy, 1 = dominated, 0 = Set 1 (non-dominated, first copy).
   With copies = 0, copies are not looked for (the G = 0 final front). A copy has the objectives of the
   row it copies, so dominance is tested against first copies only (uniq: scratch of R ints). */
static void levels(int R, const uint64_t *x, const int64_t *f1, const int64_t *f2, int copies, int8_t *lev,
                   int *uniq) {
    int u = 0;
    for (int j = 0; j < R; j++) {
        int l = 0;
        if (copies)
            for (int a = 0; a < u; a++) if (x[uniq[a]] == x[j]) { l = 2; break; }
        if (!l) uniq[u++] = j;
        lev[j] = (int8_t)l;
    }
    for (int j = 0; j < R; j++) {
        if (lev[j]) continue;
        int64_t sj = f1[j] + f2[j];
        for (int a = 0; a < u; a++) {
            int i = uniq[a];
            if (f1[i] >= f1[j] && f2[i] >= f2[j] && f1[i] + f2[i] > sj) { lev[j] = 1; break; }
        }
    }
}

/* The G generations of moo.ga_front's numpy loop on its draws.
   init: P*k genes (0/1, row-major); pa, pb, cut: G*H; flips: nflip flat indices into G*P*k;
   mut: G*P scratch (zeroed here). Out: pop_out P*k genes of the last population (buffer order),
   final P flags (Set 1). Returns 0. */
int ga_loop(int k, int P, int G, const int64_t *n, const int64_t *b, int64_t cn, int64_t cb,
            const uint8_t *init, const int64_t *pa, const int64_t *pb, const int64_t *cut,
            const int64_t *flips, int64_t nflip, uint64_t *mut, uint8_t *pop_out, uint8_t *final) {
    int R = 2 * P, H = (P + 1) / 2;
    if (P < 1 || P > (1 << 20) || k < 1 || k > 64) return -1;
    /* scratch: x tx (u64), f1 f2 birth t1 t2 tbirth (i64), order uniq (int), lev tlev (i8) */
    char *mem = malloc((size_t)R * (8 * 8 + 2 * sizeof(int) + 2));
    if (!mem) return -2;
    uint64_t *x = (uint64_t *)mem, *tx = x + R;
    int64_t *f1 = (int64_t *)(tx + R), *f2 = f1 + R, *birth = f2 + R, *t1 = birth + R, *t2 = t1 + R,
            *tbirth = t2 + R;
    int *order = (int *)(tbirth + R), *uniq = order + R;
    int8_t *lev = (int8_t *)(uniq + R), *tlev = lev + R;
    uint64_t all = k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);

    memset(mut, 0, sizeof(uint64_t) * (size_t)G * (size_t)P);
    for (int64_t f = 0; f < nflip; f++) {
        int64_t cell = flips[f] / k, j = flips[f] % k;
        mut[cell] ^= (uint64_t)1 << (k - 1 - j);
    }
    /* population rows P..2P-1, children rows 0..P-1 */
    for (int c = 0; c < P; c++) {
        uint64_t v = 0;
        for (int i = 0; i < k; i++) if (init[c * k + i]) v |= (uint64_t)1 << (k - 1 - i);
        x[P + c] = repair(v, k, n, b, cn, cb, &f1[P + c], &f2[P + c]);
        birth[P + c] = 0;
    }
    if (G == 0) {
        levels(P, x + P, f1 + P, f2 + P, 0, lev, uniq);
        for (int c = 0; c < P; c++) final[c] = lev[c] == 0;
    }
    for (int g = 0; g < G; g++) {
        const int64_t *ga = pa + (size_t)g * H, *gb = pb + (size_t)g * H, *gc = cut + (size_t)g * H;
        for (int c = 0; c < P; c++) {
            int h = c < H ? c : c - H;
            int64_t A = c < H ? ga[h] : gb[h], B = c < H ? gb[h] : ga[h], ct = gc[h];
            uint64_t hi = ct >= k ? all : (all & ~((((uint64_t)1) << (k - ct)) - 1));   /* genes < cut */
            uint64_t v = ((x[P + A] & hi) | (x[P + B] & ~hi & all)) ^ mut[(size_t)g * P + c];
            x[c] = repair(v, k, n, b, cn, cb, &f1[c], &f2[c]);
            birth[c] = g + 1;
        }
        levels(R, x, f1, f2, 1, lev, uniq);
        /* stable order by (lev, -birth), i.e. numpy's argsort(lev * big - birth, kind="stable") */
        int m = 0;
        for (int r = 0; r < R; r++) {
            int p = m;
            while (p > 0 && (lev[order[p - 1]] > lev[r] ||
                             (lev[order[p - 1]] == lev[r] && birth[order[p - 1]] < birth[r]))) {
                order[p] = order[p - 1]; p--;
            }
            order[p] = r; m++;
        }
        for (int c = 0; c < P; c++) {
            int r = order[c];
            tx[c] = x[r]; t1[c] = f1[r]; t2[c] = f2[r]; tbirth[c] = birth[r]; tlev[c] = lev[r];
        }
        for (int c = 0; c < P; c++) {
            x[P + c] = tx[c]; f1[P + c] = t1[c]; f2[P + c] = t2[c]; birth[P + c] = tbirth[c];
        }
        if (g == G - 1)
            for (int c = 0; c < P; c++) final[c] = tlev[c] == 0;
    }
    for (int c = 0; c < P; c++)
        for (int i = 0; i < k; i++) pop_out[c * k + i] = (uint8_t)((x[P + c] >> (k - 1 - i)) & 1);
    free(mem);
    return 0;
}
