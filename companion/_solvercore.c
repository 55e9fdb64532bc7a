/*
 * companion._solvercore: the hot loop of companion.solver, in C.
 *
 * The same algorithm, step for step, as companion.solver._PyCore (read that
 * class's docstrings for the reasoning); the two must give the same moves and
 * node counts.  Tile sets are bitsets of W 64-bit words.  The free rule is not
 * derived here: the covers / covered_by / left / right tables come from
 * companion.rules.Geometry through prepare().
 *
 *   prepare(z, covers, covered_by, left, right) -> capsule
 *   solve(capsule, keys, present, node_limit, lazy_budget=0, restart0=0)
 *       -> (code, moves, nodes)
 *       code 1 solvable, 0 not solvable, -1 node limit hit (node_limit < 0: none);
 *       moves: (i, j) slot-index pairs of a winning line when code is 1.
 *
 * The search runs without the GIL.  Positions remembered as dead are stored in
 * full (no hash-only entries), so a verdict never rests on a hash collision.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define MAXW 16 /* up to 1024 slots */
#define CAPSULE_NAME "companion._solvercore.Geom"

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static __inline int popc(u64 x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}
static __inline int ctz(u64 x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
#else
static inline int popc(u64 x) { return __builtin_popcountll(x); }
static inline int ctz(u64 x) { return __builtin_ctzll(x); }
#endif

#define BIT(s, i) (((s)[(i) >> 6] >> ((i)&63)) & 1ULL)
#define SETB(s, i) ((s)[(i) >> 6] |= 1ULL << ((i)&63))
#define CLRB(s, i) ((s)[(i) >> 6] &= ~(1ULL << ((i)&63)))

/* iterate over the set bits of a snapshot bitset `src` (W words) */
#define FOR_BITS(var, src, W)                                              \
    for (int _w = 0; _w < (W); _w++)                                       \
        for (u64 _x = (src)[_w]; _x; _x &= _x - 1)                         \
            for (int var = _w * 64 + ctz(_x), _once = 1; _once; _once = 0)

/* ------------------------------------------------------------------ geometry */

typedef struct {
    int n, W;
    int *z;
    int *off[4]; /* CSR offsets: 0 covers, 1 covered_by, 2 left, 3 right */
    int *adj[4];
} Geom;

static void geom_free(Geom *g) {
    if (!g) return;
    free(g->z);
    for (int k = 0; k < 4; k++) { free(g->off[k]); free(g->adj[k]); }
    free(g);
}

static void capsule_destructor(PyObject *cap) {
    geom_free((Geom *)PyCapsule_GetPointer(cap, CAPSULE_NAME));
}

static int read_table(PyObject *seq, int n, int **off_out, int **adj_out) {
    PyObject *fast = PySequence_Fast(seq, "geometry table must be a sequence");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "geometry table length differs from z");
        return -1;
    }
    int *off = malloc(sizeof(int) * (n + 1));
    int cap = 8 * n + 8, m = 0;
    int *adj = malloc(sizeof(int) * cap);
    if (!off || !adj) { free(off); free(adj); Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) {
        off[i] = m;
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(fast, i), "geometry row must be a sequence");
        if (!row) { free(off); free(adj); Py_DECREF(fast); return -1; }
        Py_ssize_t k = PySequence_Fast_GET_SIZE(row);
        for (Py_ssize_t j = 0; j < k; j++) {
            long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(row, j));
            if (v == -1 && PyErr_Occurred()) { Py_DECREF(row); free(off); free(adj); Py_DECREF(fast); return -1; }
            if (v < 0 || v >= n) {
                Py_DECREF(row); free(off); free(adj); Py_DECREF(fast);
                PyErr_SetString(PyExc_ValueError, "geometry index out of range");
                return -1;
            }
            if (m == cap) {
                cap *= 2;
                int *na = realloc(adj, sizeof(int) * cap);
                if (!na) { Py_DECREF(row); free(off); free(adj); Py_DECREF(fast); PyErr_NoMemory(); return -1; }
                adj = na;
            }
            adj[m++] = (int)v;
        }
        Py_DECREF(row);
    }
    off[n] = m;
    Py_DECREF(fast);
    *off_out = off;
    *adj_out = adj;
    return 0;
}

static PyObject *py_prepare(PyObject *self, PyObject *args) {
    PyObject *z, *tabs[4];
    if (!PyArg_ParseTuple(args, "OOOOO", &z, &tabs[0], &tabs[1], &tabs[2], &tabs[3])) return NULL;
    PyObject *zf = PySequence_Fast(z, "z must be a sequence");
    if (!zf) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(zf);
    if (n > MAXW * 64) {
        Py_DECREF(zf);
        PyErr_Format(PyExc_ValueError, "layout has %zd slots; the C core handles at most %d", n, MAXW * 64);
        return NULL;
    }
    Geom *g = calloc(1, sizeof(Geom));
    if (!g) { Py_DECREF(zf); return PyErr_NoMemory(); }
    g->n = (int)n;
    g->W = (int)((n + 63) / 64);
    if (g->W == 0) g->W = 1;
    g->z = malloc(sizeof(int) * (n + 1));
    if (!g->z) { Py_DECREF(zf); geom_free(g); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(zf, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(zf); geom_free(g); return NULL; }
        g->z[i] = (int)v;
    }
    Py_DECREF(zf);
    for (int k = 0; k < 4; k++) {
        if (read_table(tabs[k], (int)n, &g->off[k], &g->adj[k]) < 0) { geom_free(g); return NULL; }
    }
    PyObject *cap = PyCapsule_New(g, CAPSULE_NAME, capsule_destructor);
    if (!cap) geom_free(g);
    return cap;
}

/* ------------------------------------------------------------------ transposition table */

typedef struct {
    u64 *hashes;  /* 0 = empty */
    size_t *offs; /* into arena */
    size_t mask, count, limit;
    u64 *arena;
    size_t alen, acap;
    int full;
} TT;

static u64 mix64(u64 x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static int tt_init(TT *t) {
    memset(t, 0, sizeof(*t));
    t->mask = 1023;
    t->hashes = calloc(t->mask + 1, sizeof(u64));
    t->offs = calloc(t->mask + 1, sizeof(size_t));
    t->acap = 4096;
    t->arena = malloc(sizeof(u64) * t->acap);
    t->limit = (size_t)1 << 22; /* entries; beyond this the table stops growing (still exact) */
    return (t->hashes && t->offs && t->arena) ? 0 : -1;
}

static void tt_free(TT *t) { free(t->hashes); free(t->offs); free(t->arena); }

/* key layout in the arena: [len, words...] */
static int tt_find(const TT *t, u64 h, const u64 *key, size_t len) {
    size_t i = h & t->mask;
    while (t->hashes[i]) {
        if (t->hashes[i] == h) {
            const u64 *k = t->arena + t->offs[i];
            if (k[0] == len && memcmp(k + 1, key, len * sizeof(u64)) == 0) return 1;
        }
        i = (i + 1) & t->mask;
    }
    return 0;
}

static void tt_insert(TT *t, u64 h, const u64 *key, size_t len) {
    if (t->full) return;
    /* bounded memory: past 4 M positions or 256 MiB of keys, stop remembering
       (the search stays exact, it only loses some pruning) */
    if (t->count >= t->limit || t->alen + len + 1 > ((size_t)1 << 25)) { t->full = 1; return; }
    if (2 * (t->count + 1) > t->mask + 1) { /* grow */
        size_t nm = 2 * (t->mask + 1) - 1;
        u64 *nh = calloc(nm + 1, sizeof(u64));
        size_t *no = calloc(nm + 1, sizeof(size_t));
        if (!nh || !no) { free(nh); free(no); t->full = 1; return; }
        for (size_t i = 0; i <= t->mask; i++) {
            if (!t->hashes[i]) continue;
            size_t j = t->hashes[i] & nm;
            while (nh[j]) j = (j + 1) & nm;
            nh[j] = t->hashes[i];
            no[j] = t->offs[i];
        }
        free(t->hashes); free(t->offs);
        t->hashes = nh; t->offs = no; t->mask = nm;
    }
    if (t->alen + len + 1 > t->acap) {
        size_t nc = t->acap * 2;
        while (t->alen + len + 1 > nc) nc *= 2;
        u64 *na = realloc(t->arena, nc * sizeof(u64));
        if (!na) { t->full = 1; return; }
        t->arena = na; t->acap = nc;
    }
    size_t i = h & t->mask;
    while (t->hashes[i]) i = (i + 1) & t->mask;
    t->hashes[i] = h;
    t->offs[i] = t->alen;
    t->arena[t->alen] = len;
    memcpy(t->arena + t->alen + 1, key, len * sizeof(u64));
    t->alen += len + 1;
    t->count++;
}

/* ------------------------------------------------------------------ search state */

typedef struct { int kind, a, b; } LogE; /* kind 0 remove, 1 commit, 2 remove committed, 3 dead pair */

typedef struct {
    const Geom *g;
    int n, W, K;
    int *key;          /* -1 where absent */
    u64 *gmask;        /* K * W */
    u64 *above;        /* n * W */
    u64 *incompat;     /* n * W */
    u64 *candmask;     /* n * W: possible partners: same group, not in the same stack,
                          not known to lead to a dead end from the current position */
    u64 P[MAXW], F[MAXW], U[MAXW];
    u64 dirtyT[MAXW];  /* tiles of groups changed since their last check in propagate's step C */
    int *ncov, *nl, *nr, *partner;
    int *rcov, *rnl, *rnr; /* relaxation scratch */
    LogE *log;
    int nlog, caplog;
    long long nodes, limit;
    int exhausted, oom;
    double deadline; /* 0: none */
    int timeup;
    int odd;                         /* some group has an odd count: no win */
    int phase;                       /* 0: nothing run yet; 1: the lazy run is done */
    long long lazy_budget, restart0, next_budget;
    PyObject *geom_ref;              /* the geometry capsule, held by a kept search */
    TT tt;
    u64 *keybuf; /* TT key scratch */
    long long *wt; /* per group: how often it took part in a dead end */
    int lazy;      /* lookahead mode of the current run */
    long long la_id;
    /* lazy mode's memory of each group's last evaluation */
    char *c_known;
    long long *c_stamp, *c_reg;
    int *c_nv, *c_a, *c_off, *c_vals;
} S;

#define ROW(arr, i) ((arr) + (size_t)(i) * (size_t)s->W)

static inline int is_free(const S *s, int j) {
    return BIT(s->P, j) && s->ncov[j] == 0 && (s->nl[j] == 0 || s->nr[j] == 0);
}

static inline void refresh(S *s, int j) {
    if (is_free(s, j)) SETB(s->F, j); else CLRB(s->F, j);
}

static void take(S *s, int i) {
    const Geom *g = s->g;
    CLRB(s->P, i);
    CLRB(s->F, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; s->ncov[j]--; refresh(s, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; s->nr[j]--; refresh(s, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; s->nl[j]--; refresh(s, j); }
}

static void put(S *s, int i) {
    const Geom *g = s->g;
    SETB(s->P, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; s->ncov[j]++; refresh(s, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; s->nr[j]++; refresh(s, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; s->nl[j]++; refresh(s, j); }
    refresh(s, i);
}

static int log_push(S *s, int kind, int a, int b) {
    if (s->nlog == s->caplog) {
        int nc = s->caplog * 2;
        LogE *nl = realloc(s->log, sizeof(LogE) * nc);
        if (!nl) { s->oom = 1; return -1; }
        s->log = nl; s->caplog = nc;
    }
    s->log[s->nlog].kind = kind; s->log[s->nlog].a = a; s->log[s->nlog].b = b;
    s->nlog++;
    return 0;
}

static inline void mark_dirty(S *s, int a) {
    const u64 *gm = ROW(s->gmask, s->key[a]);
    for (int w = 0; w < s->W; w++) s->dirtyT[w] |= gm[w];
}

static void do_remove(S *s, int a, int b) {
    int committed = s->partner[a] == b;
    mark_dirty(s, a);
    take(s, a);
    take(s, b);
    CLRB(s->U, a); CLRB(s->U, b);
    log_push(s, committed ? 2 : 0, a, b);
}

static void do_commit(S *s, int a, int b) {
    mark_dirty(s, a);
    s->partner[a] = b; s->partner[b] = a;
    CLRB(s->U, a); CLRB(s->U, b);
    log_push(s, 1, a, b);
}

/* the pair (a, b) can no longer be part of a win from here on: drop it from
   both tiles' possible partners (undone on backtracking) */
static void mark_dead(S *s, int a, int b) {
    if (!BIT(ROW(s->candmask, a), b)) return;
    CLRB(ROW(s->candmask, a), b);
    CLRB(ROW(s->candmask, b), a);
    mark_dirty(s, a);
    log_push(s, 3, a, b);
}

static void undo(S *s, int mark) {
    while (s->nlog > mark) {
        LogE e = s->log[--s->nlog];
        if (e.kind == 3) {
            SETB(ROW(s->candmask, e.a), e.b);
            SETB(ROW(s->candmask, e.b), e.a);
        } else if (e.kind == 1) {
            s->partner[e.a] = s->partner[e.b] = -1;
            SETB(s->U, e.a); SETB(s->U, e.b);
        } else {
            put(s, e.b);
            put(s, e.a);
            if (e.kind == 0) { SETB(s->U, e.a); SETB(s->U, e.b); }
        }
    }
}

/* ------------------------------------------------------------------ reasoning */

static int cycle(S *s, int a, int b) {
    const int W = s->W;
    u64 Sx[MAXW], done[MAXW];
    for (int w = 0; w < W; w++) { Sx[w] = (ROW(s->above, a)[w] | ROW(s->above, b)[w]) & s->P[w]; done[w] = 0; }
    for (;;) {
        u64 todo[MAXW];
        int any = 0;
        for (int w = 0; w < W; w++) { todo[w] = Sx[w] & ~s->U[w] & ~done[w]; any |= todo[w] != 0; }
        if (!any) break;
        FOR_BITS(x, todo, W) {
            SETB(done, x);
            int y = s->partner[x];
            const u64 *ay = ROW(s->above, y);
            for (int w = 0; w < W; w++) Sx[w] |= ay[w] & s->P[w];
            if (BIT(s->P, y)) SETB(Sx, y);
        }
    }
    if (BIT(Sx, a) || BIT(Sx, b)) { s->wt[s->key[a]]++; return 1; }
    return 0;
}

/* returns score >= 0, or -1 on a dead end */
static long long relax(S *s) {
    const Geom *g = s->g;
    const int W = s->W, n = s->n;
    u64 Fr[MAXW], R[MAXW], check[MAXW], avail[MAXW], rem[MAXW], nw[MAXW];
    memcpy(s->rcov, s->ncov, sizeof(int) * n);
    memcpy(s->rnl, s->nl, sizeof(int) * n);
    memcpy(s->rnr, s->nr, sizeof(int) * n);
    int *ncov = s->rcov, *nl = s->rnl, *nr = s->rnr;
    for (int w = 0; w < W; w++) { Fr[w] = s->F[w]; R[w] = 0; check[w] = Fr[w]; }
    long long rnd = 0, total = 0;
    u64 ua[MAXW];
    for (;;) {
        int cnt = 0;
        for (int w = 0; w < W; w++) { avail[w] = Fr[w] | R[w]; ua[w] = avail[w] & s->U[w]; rem[w] = 0; check[w] &= Fr[w]; }
        FOR_BITS(t, check, W) {
            int ok = 0;
            if (BIT(s->U, t)) {
                const u64 *cm = ROW(s->candmask, t);
                for (int w = 0; w < W; w++) if (cm[w] & ua[w]) { ok = 1; break; }
            } else {
                ok = (int)BIT(avail, s->partner[t]);
            }
            if (ok) { SETB(rem, t); cnt++; }
        }
        if (!cnt) break;
        rnd++;
        total += rnd * cnt;
        for (int w = 0; w < W; w++) { R[w] |= rem[w]; Fr[w] &= ~rem[w]; nw[w] = 0; }
        FOR_BITS(t, rem, W) {
            for (int k = g->off[0][t]; k < g->off[0][t + 1]; k++) {
                int j = g->adj[0][k];
                if (--ncov[j] == 0 && (nl[j] == 0 || nr[j] == 0) && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[2][t]; k < g->off[2][t + 1]; k++) {
                int j = g->adj[2][k];
                if (--nr[j] == 0 && ncov[j] == 0 && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[3][t]; k < g->off[3][t + 1]; k++) {
                int j = g->adj[3][k];
                if (--nl[j] == 0 && ncov[j] == 0 && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
        }
        for (int w = 0; w < W; w++) { nw[w] &= ~Fr[w] & ~R[w]; Fr[w] |= nw[w]; check[w] = 0; }
        FOR_BITS(t, nw, W) {
            const u64 *gm = ROW(s->gmask, s->key[t]);
            for (int w = 0; w < W; w++) check[w] |= gm[w];
        }
    }
    int dead = 0;
    for (int w = 0; w < W; w++) if (R[w] != s->P[w]) dead = 1;
    if (!dead) return total;
    /* the starved tiles (free, but no partner ever available) get the blame */
    for (int w = 0; w < W; w++) rem[w] = Fr[w] & ~R[w];
    FOR_BITS(t, rem, W) s->wt[s->key[t]]++;
    return -1;
}

static long long propagate(S *s) {
    const int W = s->W;
    u64 snap[MAXW];
    for (;;) {
        int progress = 0;
        /* A */
        for (int w = 0; w < W; w++) snap[w] = s->F[w] & ~s->U[w];
        FOR_BITS(t, snap, W) {
            int p = s->partner[t];
            if (t < p && BIT(s->F, p) && BIT(s->F, t)) { do_remove(s, t, p); progress = 1; }
        }
        /* B */
        for (int k = 0; k < s->K; k++) {
            const u64 *gm = ROW(s->gmask, k);
            int any = 0, allfree = 1;
            for (int w = 0; w < W; w++) {
                snap[w] = gm[w] & s->U[w];
                any |= snap[w] != 0;
                if (snap[w] & ~s->F[w]) allfree = 0;
            }
            if (any && allfree) {
                int first = -1;
                FOR_BITS(a, snap, W) {
                    if (first < 0) first = a;
                    else { do_remove(s, first, a); first = -1; }
                }
                progress = 1;
            }
        }
        /* C (only tiles of groups changed since they were last checked: the
           others still have two or more possible partners) */
        for (int w = 0; w < W; w++) { snap[w] = s->U[w] & s->dirtyT[w]; s->dirtyT[w] = 0; }
        FOR_BITS(t, snap, W) {
            if (!BIT(s->U, t)) continue;
            const u64 *cm = ROW(s->candmask, t);
            int c = 0, u = -1;
            for (int w = 0; w < W && c < 2; w++) {
                u64 x = cm[w] & s->U[w];
                if (x) { c += (x & (x - 1)) ? 2 : 1; u = w * 64 + ctz(x); }
            }
            if (c == 0) s->wt[s->key[t]]++;
            if (c == 0 || (c == 1 && (do_commit(s, t, u), cycle(s, t, u)))) {
                for (int w = 0; w < W; w++) s->dirtyT[w] |= snap[w];
                return -1;
            }
            if (c == 1) progress = 1;
        }
        if (!progress) return relax(s);
    }
}

static size_t state_key(S *s) {
    const int W = s->W;
    size_t len = 0;
    u64 C[MAXW];
    for (int w = 0; w < W; w++) { s->keybuf[len++] = s->P[w]; C[w] = s->P[w] & ~s->U[w]; }
    FOR_BITS(t, C, W) s->keybuf[len++] = (u64)(unsigned)s->partner[t];
    return len;
}

static u64 key_hash(const u64 *k, size_t len) {
    u64 h = 0x12345678ULL + len;
    for (size_t i = 0; i < len; i++) h = mix64(h ^ k[i]);
    return h ? h : 1;
}

/* One tile per undecided group is tried with each possible partner. */
typedef struct { long long sc; int c; } Opt;

static int cmp_opt(const void *x, const void *y) {
    const Opt *a = x, *b = y;
    if (a->sc != b->sc) return a->sc < b->sc ? -1 : 1;
    return a->c - b->c;
}

/* group k's branching tile (*a_out) and its viable partners, best first;
   returns their number (0: dead end).  -1: group k is decided. */
static int eval_group(S *s, int k, int *a_out, Opt *viable) {
    const int W = s->W;
    const u64 *gm = ROW(s->gmask, k);
    u64 G[MAXW], FU[MAXW];
    int anyG = 0, anyF = 0;
    for (int w = 0; w < W; w++) { G[w] = gm[w] & s->U[w]; FU[w] = G[w] & s->F[w]; anyG |= G[w] != 0; anyF |= FU[w] != 0; }
    if (!anyG) return -1;
    int a = -1;
    const u64 *src = anyF ? FU : G;
    for (int w = 0; w < W; w++) if (src[w]) { a = w * 64 + ctz(src[w]); break; }
    u64 cand[MAXW];
    const u64 *cm = ROW(s->candmask, a);
    for (int w = 0; w < W; w++) cand[w] = cm[w] & s->U[w];
    int nv = 0, four = 0;
    for (int w = 0; w < W; w++) four += popc(G[w]);
    four = four == 4;
    FOR_BITS(c, cand, W) {
        int m = s->nlog;
        do_commit(s, a, c);
        long long sc = cycle(s, a, c) ? -1 : propagate(s);
        undo(s, m);
        if (sc >= 0) { viable[nv].sc = sc; viable[nv].c = c; nv++; continue; }
        /* remember the dead pairing below this node */
        mark_dead(s, a, c);
        if (four) {
            int o[2], no = 0;
            FOR_BITS(x, G, W) if (x != a && x != c) o[no++] = x;
            mark_dead(s, o[0], o[1]);
        }
    }
    qsort(viable, nv, sizeof(Opt), cmp_opt);
    *a_out = a;
    return nv;
}

/* is (nv, reg) for a group of weight wk better than the best so far?
   Fewest viable partners per unit of weight first (dom/wdeg), then the
   largest gap between the best and the second-best partner's score. */
static inline int better(int nv, long long reg, long long wk, int best_nv, long long best_reg, long long best_w) {
    long long l = (long long)nv * best_w, r = (long long)best_nv * wk;
    return l < r || (l == r && reg < best_reg);
}

/* apply the forced partner of a group with one viable partner; 0 on a dead end */
static int force(S *s, int a, int c) {
    do_commit(s, a, c);
    return !(cycle(s, a, c) || propagate(s) < 0);
}

static int board_empty(const S *s) {
    for (int w = 0; w < s->W; w++) if (s->P[w]) return 0;
    return 1;
}

#define LAZY_UNKNOWN_NV 2

/* returns 0 dead, 1 done, 2 branch (tile in *a_out, partners in opts[], *nopt of them) */
static int lookahead(S *s, int *a_out, int *opts, int *nopt) {
    Opt *viable = malloc(sizeof(Opt) * (s->n + 1));
    if (!viable) { s->oom = 1; return 0; }
    int ret;
    for (;;) {
        s->la_id++;
        int forced = 0;
        if (!s->lazy) {
            int best_a = -1, best_nv = 0;
            long long best_reg = 0, best_w = 1;
            for (int k = 0; k < s->K && !forced; k++) {
                int a;
                int nv = eval_group(s, k, &a, viable);
                if (nv < 0) continue;
                if (nv == 0) { ret = 0; goto out; }
                if (nv == 1) {
                    if (!force(s, a, viable[0].c)) { ret = 0; goto out; }
                    forced = 1;
                    break;
                }
                long long reg = viable[0].sc - viable[1].sc;
                if (best_a < 0 || better(nv, reg, s->wt[k], best_nv, best_reg, best_w)) {
                    best_a = a; best_nv = nv; best_reg = reg; best_w = s->wt[k];
                    for (int i = 0; i < nv; i++) opts[i] = viable[i].c;
                }
            }
            if (!forced) {
                if (best_a < 0) { ret = board_empty(s) ? 1 : 0; goto out; }
                *a_out = best_a; *nopt = best_nv; ret = 2; goto out;
            }
        } else {
            /* lazy: rank groups by their last evaluation (maybe from another
               position), evaluate the best one afresh, until the best is fresh */
            for (;;) {
                int best = -1, best_nv = 0;
                long long best_reg = 0, best_w = 1;
                for (int k = 0; k < s->K; k++) {
                    const u64 *gm = ROW(s->gmask, k);
                    int any = 0;
                    for (int w = 0; w < s->W; w++) if (gm[w] & s->U[w]) { any = 1; break; }
                    if (!any) continue;
                    int nv = s->c_known[k] ? s->c_nv[k] : LAZY_UNKNOWN_NV;
                    long long reg = s->c_known[k] ? s->c_reg[k] : 0;
                    if (best < 0 || better(nv, reg, s->wt[k], best_nv, best_reg, best_w)) {
                        best = k; best_nv = nv; best_reg = reg; best_w = s->wt[k];
                    }
                }
                if (best < 0) { ret = board_empty(s) ? 1 : 0; goto out; }
                if (s->c_stamp[best] == s->la_id) {
                    *a_out = s->c_a[best];
                    *nopt = s->c_nv[best];
                    for (int i = 0; i < s->c_nv[best]; i++) opts[i] = s->c_vals[s->c_off[best] + i];
                    ret = 2; goto out;
                }
                int a;
                int nv = eval_group(s, best, &a, viable);
                if (nv == 0) { ret = 0; goto out; }
                if (nv == 1) {
                    if (!force(s, a, viable[0].c)) { ret = 0; goto out; }
                    forced = 1;
                    break;
                }
                s->c_known[best] = 1;
                s->c_stamp[best] = s->la_id;
                s->c_nv[best] = nv;
                s->c_reg[best] = viable[0].sc - viable[1].sc;
                s->c_a[best] = a;
                for (int i = 0; i < nv; i++) s->c_vals[s->c_off[best] + i] = viable[i].c;
            }
        }
        /* a forced commitment changed the position: look again */
        if (board_empty(s)) { ret = 1; goto out; }
    }
out:
    free(viable);
    return ret;
}

/* 1 solved, 0 failed, -1 limit / out of memory */
static int search(S *s) {
    const int W = s->W;
    s->nodes++;
    if (s->limit >= 0 && s->nodes > s->limit) { s->exhausted = 1; return -1; }
    if (s->deadline > 0 && (s->nodes & 63) == 0 && now_s() > s->deadline) { s->timeup = 1; return -1; }
    if (s->timeup || s->oom) return -1;
    int mark = s->nlog;
    if (propagate(s) < 0) { undo(s, mark); return s->oom ? -1 : 0; }
    int empty = 1;
    for (int w = 0; w < W; w++) if (s->P[w]) empty = 0;
    if (empty) return 1;
    size_t len = state_key(s);
    u64 h = key_hash(s->keybuf, len);
    if (tt_find(&s->tt, h, s->keybuf, len)) { undo(s, mark); return 0; }
    /* one block per node: the options, then a copy of the entry key */
    size_t nopt_bytes = sizeof(u64) * (size_t)((s->n + 2) / 2 + 1);
    char *blk = malloc(nopt_bytes + sizeof(u64) * len);
    if (!blk) { s->oom = 1; return -1; }
    int *opts = (int *)blk;
    u64 *mykey = (u64 *)(blk + nopt_bytes);
    memcpy(mykey, s->keybuf, sizeof(u64) * len);
    int a = -1, nopt = 0;
    int r = lookahead(s, &a, opts, &nopt);
    if (s->oom) { free(blk); return -1; }
    if (r == 1) { free(blk); return 1; }
    if (r == 2) {
        for (int i = 0; i < nopt; i++) {
            int c = opts[i];
            int m2 = s->nlog;
            do_commit(s, a, c);
            if (!cycle(s, a, c)) {
                int rr = search(s);
                if (rr != 0) { free(blk); return rr; }
            }
            undo(s, m2);
        }
    }
    tt_insert(&s->tt, h, mykey, len);
    free(blk);
    undo(s, mark);
    return 0;
}

/* ------------------------------------------------------------------ entry point */

static void pair_free(S *s) {
    if (!s) return;
    free(s->key); free(s->gmask); free(s->above); free(s->incompat); free(s->candmask);
    free(s->ncov); free(s->nl); free(s->nr); free(s->rcov); free(s->rnl); free(s->rnr);
    free(s->partner); free(s->wt); free(s->log);
    free(s->c_known); free(s->c_stamp); free(s->c_reg); free(s->c_nv); free(s->c_a); free(s->c_off); free(s->c_vals);
    free(s->keybuf);
    if (s->tt.hashes || s->tt.offs || s->tt.arena) tt_free(&s->tt);
    Py_XDECREF(s->geom_ref);
    free(s);
}

/* the search state for keys / present (sequences of the layout's length); NULL with an exception set */
static S *pair_setup(Geom *g, PyObject *kf, PyObject *pf) {
    const int n = g->n, W = g->W;
    S *s = calloc(1, sizeof(S));
    if (!s) return (S *)PyErr_NoMemory();
    s->g = g; s->n = n; s->W = W; s->limit = -1;
    s->key = malloc(sizeof(int) * (n + 1));
    int *pres = malloc(sizeof(int) * (n + 1));
    if (!s->key || !pres) { free(s->key); free(pres); free(s); return (S *)PyErr_NoMemory(); }
    int K = 0;
    for (int i = 0; i < n; i++) {
        pres[i] = PyObject_IsTrue(PySequence_Fast_GET_ITEM(pf, i));
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(kf, i));
        if ((v == -1 && PyErr_Occurred()) || pres[i] < 0) { free(s->key); free(pres); free(s); return NULL; }
        if (pres[i] && (v < 0 || v > 1000000)) {
            free(s->key); free(pres); free(s);
            PyErr_SetString(PyExc_ValueError, "match key out of range");
            return NULL;
        }
        s->key[i] = pres[i] ? (int)v : -1;
        if (pres[i] && v + 1 > K) K = (int)v + 1;
    }
    s->K = K;
    size_t nw = (size_t)W;
    s->gmask = calloc((size_t)(K ? K : 1) * nw, sizeof(u64));
    s->above = calloc((size_t)n * nw + 1, sizeof(u64));
    s->incompat = calloc((size_t)n * nw + 1, sizeof(u64));
    s->candmask = calloc((size_t)n * nw + 1, sizeof(u64));
    u64 *below = calloc((size_t)n * nw + 1, sizeof(u64));
    s->ncov = calloc(n + 1, sizeof(int)); s->nl = calloc(n + 1, sizeof(int)); s->nr = calloc(n + 1, sizeof(int));
    s->rcov = calloc(n + 1, sizeof(int)); s->rnl = calloc(n + 1, sizeof(int)); s->rnr = calloc(n + 1, sizeof(int));
    s->partner = malloc(sizeof(int) * (n + 1));
    s->wt = malloc(sizeof(long long) * (size_t)(K + 1));
    s->c_known = calloc((size_t)K + 1, 1);
    s->c_stamp = calloc((size_t)K + 1, sizeof(long long));
    s->c_reg = calloc((size_t)K + 1, sizeof(long long));
    s->c_nv = calloc((size_t)K + 1, sizeof(int));
    s->c_a = calloc((size_t)K + 1, sizeof(int));
    s->c_off = calloc((size_t)K + 1, sizeof(int));
    s->c_vals = calloc((size_t)n + 1, sizeof(int));
    s->caplog = 2 * n + 16;
    s->log = malloc(sizeof(LogE) * s->caplog);
    s->keybuf = malloc(sizeof(u64) * (nw + n + 1));
    int *order = malloc(sizeof(int) * (n + 1));
    int ttok = tt_init(&s->tt);
    int ok = 0;
    if (!s->gmask || !s->above || !s->incompat || !s->candmask || !below || !s->ncov || !s->nl || !s->nr || !s->rcov ||
        !s->rnl || !s->rnr || !s->partner || !s->wt || !s->c_known || !s->c_stamp || !s->c_reg || !s->c_nv ||
        !s->c_a || !s->c_off || !s->c_vals || !s->log || !s->keybuf || !order || ttok < 0) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int k = 0; k <= K; k++) s->wt[k] = 1;
    for (int i = 0; i < n; i++) {
        s->partner[i] = -1;
        if (!pres[i]) continue;
        SETB(s->P, i);
        SETB(s->U, i);
        SETB(ROW(s->gmask, s->key[i]), i);
        for (int k = g->off[1][i]; k < g->off[1][i + 1]; k++) s->ncov[i] += pres[g->adj[1][k]];
        for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) s->nl[i] += pres[g->adj[2][k]];
        for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) s->nr[i] += pres[g->adj[3][k]];
    }
    for (int i = 0; i < n; i++) if (is_free(s, i)) SETB(s->F, i);
    /* order by z (stable), then transitive covers */
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) { /* insertion sort, stable; n is small */
        int v = order[i], j = i - 1;
        while (j >= 0 && g->z[order[j]] > g->z[v]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = v;
    }
    for (int r = n - 1; r >= 0; r--) {
        int i = order[r];
        if (!pres[i]) continue;
        u64 *ai = ROW(s->above, i);
        for (int k = g->off[1][i]; k < g->off[1][i + 1]; k++) {
            int j = g->adj[1][k];
            if (!pres[j]) continue;
            SETB(ai, j);
            for (int w = 0; w < W; w++) ai[w] |= ROW(s->above, j)[w];
        }
    }
    for (int r = 0; r < n; r++) {
        int i = order[r];
        if (!pres[i]) continue;
        u64 *bi = below + (size_t)i * nw;
        for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) {
            int j = g->adj[0][k];
            if (!pres[j]) continue;
            SETB(bi, j);
            for (int w = 0; w < W; w++) bi[w] |= below[(size_t)j * nw + w];
        }
    }
    for (int i = 0; i < n; i++) {
        for (int w = 0; w < W; w++) ROW(s->incompat, i)[w] = ROW(s->above, i)[w] | below[(size_t)i * nw + w];
        SETB(ROW(s->incompat, i), i);
    }
    for (int i = 0; i < n; i++) {
        if (!pres[i]) continue;
        for (int w = 0; w < W; w++) ROW(s->candmask, i)[w] = ROW(s->gmask, s->key[i])[w] & ~ROW(s->incompat, i)[w];
    }
    for (int w = 0; w < W; w++) s->dirtyT[w] = s->P[w];
    int odd = 0, off = 0;
    for (int k = 0; k < K; k++) {
        int c = 0;
        for (int w = 0; w < W; w++) c += popc(ROW(s->gmask, k)[w]);
        if (c % 2) odd = 1;
        s->c_off[k] = off;
        off += c;
    }
    s->odd = odd;
    ok = 1;
fail:
    free(pres); free(below); free(order);
    if (!ok) { pair_free(s); return NULL; }
    return s;
}

/* Continue the runs (run 0: lazy lookahead, lazy_budget nodes, 0: skip; then
   full lookahead from the root with budgets restart0, 2 restart0, ...;
   restart0 0: one unbounded run) until a verdict, or until ``cap`` nodes in
   all (cap < 0: none; a run cut short by the cap is run again from the root
   at the next call, with what it learnt), or the deadline.  The table of
   dead positions and the weights carry over from run to run and call to
   call.  Returns 1 solvable, 0 not, -1 cap reached, -2 time up, -3 out of
   memory.  Without a cap, the same steps as before calls could resume. */
static int pair_continue(S *s, long long cap) {
    if (s->odd) return 0;
    int r = -1;
    s->timeup = 0;
    if (s->phase == 0) {
        s->phase = 1;
        s->next_budget = s->restart0;
        if (s->lazy_budget > 0) {
            s->lazy = 1;
            s->limit = (cap >= 0 && cap < s->lazy_budget) ? cap : s->lazy_budget;
            r = search(s);
            if (r >= 0) return r;
            if (s->oom) return -3;
            undo(s, 0);
            if (s->timeup) return -2;
        }
    }
    s->lazy = 0;
    for (;;) {
        if (cap >= 0 && s->nodes >= cap) return -1;
        long long lim = s->next_budget > 0 ? s->nodes + s->next_budget : -1;
        int capped = 0;
        if (cap >= 0 && (lim < 0 || lim >= cap)) { capped = 1; lim = cap; }
        s->limit = lim;
        s->exhausted = 0;
        r = search(s);
        if (r >= 0) return r;
        if (s->oom) return -3;
        undo(s, 0);
        if (s->timeup) return -2;
        if (capped || lim < 0) return -1;
        s->next_budget *= 2;
    }
}

static PyObject *pair_moves(S *s) {
    PyObject *moves = PyList_New(0);
    if (!moves) return NULL;
    for (int i = 0; i < s->nlog; i++) {
        if (s->log[i].kind == 1 || s->log[i].kind == 3) continue;
        PyObject *m = Py_BuildValue("(ii)", s->log[i].a, s->log[i].b);
        if (!m || PyList_Append(moves, m) < 0) { Py_XDECREF(m); Py_DECREF(moves); return NULL; }
        Py_DECREF(m);
    }
    return moves;
}

static void set_deadline(S *s, double seconds) {
    s->deadline = 0;
    if (seconds >= 0) { s->deadline = now_s() + seconds; if (s->deadline <= 0) s->deadline = 1e-9; }
}

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *cap, *keys_o, *pres_o;
    long long limit;
    long long lazy_budget = 0, restart0 = 0;
    double seconds = -1.0;
    if (!PyArg_ParseTuple(args, "OOOL|LLd", &cap, &keys_o, &pres_o, &limit, &lazy_budget, &restart0, &seconds))
        return NULL;
    Geom *g = PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!g) return NULL;
    PyObject *kf = PySequence_Fast(keys_o, "keys must be a sequence");
    if (!kf) return NULL;
    PyObject *pf = PySequence_Fast(pres_o, "present must be a sequence");
    if (!pf) { Py_DECREF(kf); return NULL; }
    if (PySequence_Fast_GET_SIZE(kf) != g->n || PySequence_Fast_GET_SIZE(pf) != g->n) {
        Py_DECREF(kf); Py_DECREF(pf);
        PyErr_SetString(PyExc_ValueError, "keys/present length differs from the layout");
        return NULL;
    }
    S *s = pair_setup(g, kf, pf);
    Py_DECREF(kf); Py_DECREF(pf);
    if (!s) return NULL;
    s->lazy_budget = lazy_budget;
    s->restart0 = restart0;
    set_deadline(s, seconds);
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = pair_continue(s, limit);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (r == -3) {
        PyErr_NoMemory();
    } else {
        PyObject *moves = r == 1 ? pair_moves(s) : PyList_New(0);
        if (moves) result = Py_BuildValue("(iNL)", r, moves, s->nodes);
    }
    pair_free(s);
    return result;
}

#define QCAPSULE_NAME "companion._solvercore.Pair"

static void qcapsule_destructor(PyObject *cap) {
    pair_free((S *)PyCapsule_GetPointer(cap, QCAPSULE_NAME));
}

static PyObject *py_pair_new(PyObject *self, PyObject *args) {
    PyObject *cap, *keys_o, *pres_o;
    long long lazy_budget, restart0;
    if (!PyArg_ParseTuple(args, "OOOLL", &cap, &keys_o, &pres_o, &lazy_budget, &restart0)) return NULL;
    Geom *g = PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!g) return NULL;
    PyObject *kf = PySequence_Fast(keys_o, "keys must be a sequence");
    if (!kf) return NULL;
    PyObject *pf = PySequence_Fast(pres_o, "present must be a sequence");
    if (!pf) { Py_DECREF(kf); return NULL; }
    if (PySequence_Fast_GET_SIZE(kf) != g->n || PySequence_Fast_GET_SIZE(pf) != g->n) {
        Py_DECREF(kf); Py_DECREF(pf);
        PyErr_SetString(PyExc_ValueError, "keys/present length differs from the layout");
        return NULL;
    }
    S *s = pair_setup(g, kf, pf);
    Py_DECREF(kf); Py_DECREF(pf);
    if (!s) return NULL;
    s->lazy_budget = lazy_budget;
    s->restart0 = restart0;
    Py_INCREF(cap);
    s->geom_ref = cap;
    PyObject *q = PyCapsule_New(s, QCAPSULE_NAME, qcapsule_destructor);
    if (!q) pair_free(s);
    return q;
}

static PyObject *py_pair_run(PyObject *self, PyObject *args) {
    PyObject *q;
    long long cap;
    double seconds;
    if (!PyArg_ParseTuple(args, "OLd", &q, &cap, &seconds)) return NULL;
    S *s = PyCapsule_GetPointer(q, QCAPSULE_NAME);
    if (!s) return NULL;
    if (s->oom) return PyErr_NoMemory();
    set_deadline(s, seconds);
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = pair_continue(s, cap);
    Py_END_ALLOW_THREADS
    if (r == -3) return PyErr_NoMemory();
    PyObject *moves = r == 1 ? pair_moves(s) : PyList_New(0);
    if (!moves) return NULL;
    return Py_BuildValue("(iNL)", r, moves, s->nodes);
}

/* ------------------------------------------------------------------ position search
 *
 * companion.solver._position_search in C (read its docstring): a depth-first
 * search over positions (the bitset of standing tiles) that removes free
 * matching pairs, plays safe groups at once (every standing tile of the
 * group free: any pairing of them is as good as another, and removing tiles
 * never blocks one), prunes positions the relaxed look-ahead proves dead
 * (every free tile with a possible partner free or gone leaves, round after
 * round, partners reused: a tile that never leaves can never leave in a real
 * line either) and remembers dead positions in full (no verdict rests on a
 * hash).  The object keeps its table of dead positions from one run to the
 * next, so a run with a larger budget starts better informed.
 *
 *   pos_new(capsule, keys, present) -> pcapsule
 *   pos_run(pcapsule, budget, seconds) -> (code, moves, nodes)
 *       code 1 solvable, 0 not, -1 budget spent (budget < 0: none), -2 time
 *       up (seconds < 0: none); nodes: positions expanded in this run.
 */

#define PCAPSULE_NAME "companion._solvercore.Pos"

typedef struct {
    PyObject *geom_ref;
    const Geom *g;
    int n, W, K;
    int *key;
    u64 *gmask;   /* K * W */
    u64 *cand;    /* n * W: same group, not in the same stack (static) */
    u64 P[MAXW], F[MAXW];
    int *ncov, *nl, *nr;
    int *rcov, *rnl, *rnr;
    int *mv;      /* moves: 2 per pair */
    int nmv;
    int *pbuf;    /* candidate pairs of every open node: (score, a, b) triples */
    long long *sbuf;
    size_t pcap;
    long long nodes, limit;
    double deadline;
    int stop;     /* -1 budget, -2 time, -3 out of memory */
    TT tt;
} PS;


static inline int ps_is_free(const PS *s, int j) {
    return BIT(s->P, j) && s->ncov[j] == 0 && (s->nl[j] == 0 || s->nr[j] == 0);
}

static inline void ps_refresh(PS *s, int j) {
    if (ps_is_free(s, j)) SETB(s->F, j); else CLRB(s->F, j);
}

static void ps_take(PS *s, int i) {
    const Geom *g = s->g;
    CLRB(s->P, i);
    CLRB(s->F, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; s->ncov[j]--; ps_refresh(s, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; s->nr[j]--; ps_refresh(s, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; s->nl[j]--; ps_refresh(s, j); }
}

static void ps_put(PS *s, int i) {
    const Geom *g = s->g;
    SETB(s->P, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; s->ncov[j]++; ps_refresh(s, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; s->nr[j]++; ps_refresh(s, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; s->nl[j]++; ps_refresh(s, j); }
    ps_refresh(s, i);
}

static void ps_move(PS *s, int a, int b) {
    ps_take(s, a);
    ps_take(s, b);
    s->mv[2 * s->nmv] = a;
    s->mv[2 * s->nmv + 1] = b;
    s->nmv++;
}

static void ps_unmove_to(PS *s, int mark) {
    while (s->nmv > mark) {
        s->nmv--;
        ps_put(s, s->mv[2 * s->nmv + 1]);
        ps_put(s, s->mv[2 * s->nmv]);
    }
}

/* Relaxed look-ahead: every free tile with a possible partner (same group,
   not in its stack, standing) that is free or already gone leaves, round
   after round.  Returns -1 when some tile never leaves (a dead position),
   else the sum over tiles of the round each leaves in (small = easy). */
static long long ps_relax(PS *s) {
    const Geom *g = s->g;
    const int W = s->W, n = s->n;
    u64 Fr[MAXW], R[MAXW], check[MAXW], avail[MAXW], rem[MAXW], nw[MAXW];
    memcpy(s->rcov, s->ncov, sizeof(int) * n);
    memcpy(s->rnl, s->nl, sizeof(int) * n);
    memcpy(s->rnr, s->nr, sizeof(int) * n);
    int *ncov = s->rcov, *nl = s->rnl, *nr = s->rnr;
    for (int w = 0; w < W; w++) { Fr[w] = s->F[w]; R[w] = 0; check[w] = Fr[w]; }
    long long rnd = 0, total = 0;
    for (;;) {
        int cnt = 0;
        for (int w = 0; w < W; w++) { avail[w] = Fr[w] | R[w]; rem[w] = 0; check[w] &= Fr[w]; }
        FOR_BITS(t, check, W) {
            const u64 *cm = ROW(s->cand, t);
            for (int w = 0; w < W; w++) if (cm[w] & avail[w]) { SETB(rem, t); cnt++; break; }
        }
        if (!cnt) break;
        rnd++;
        total += rnd * cnt;
        for (int w = 0; w < W; w++) { R[w] |= rem[w]; Fr[w] &= ~rem[w]; nw[w] = 0; }
        FOR_BITS(t, rem, W) {
            for (int k = g->off[0][t]; k < g->off[0][t + 1]; k++) {
                int j = g->adj[0][k];
                if (--ncov[j] == 0 && (nl[j] == 0 || nr[j] == 0) && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[2][t]; k < g->off[2][t + 1]; k++) {
                int j = g->adj[2][k];
                if (--nr[j] == 0 && ncov[j] == 0 && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[3][t]; k < g->off[3][t + 1]; k++) {
                int j = g->adj[3][k];
                if (--nl[j] == 0 && ncov[j] == 0 && BIT(s->P, j) && !BIT(R, j)) SETB(nw, j);
            }
        }
        /* only tiles of groups that gained an available tile can change */
        for (int w = 0; w < W; w++) { nw[w] &= ~Fr[w] & ~R[w]; Fr[w] |= nw[w]; check[w] = nw[w]; }
        FOR_BITS(t, nw, W) {
            const u64 *gm = ROW(s->gmask, s->key[t]);
            for (int w = 0; w < W; w++) check[w] |= gm[w];
        }
    }
    for (int w = 0; w < W; w++) if (R[w] != s->P[w]) return -1;
    return total;
}

static int ps_reserve(PS *s, size_t need) {
    if (need <= s->pcap) return 0;
    size_t nc = s->pcap ? s->pcap : 1024;
    while (nc < need) nc *= 2;
    int *np = realloc(s->pbuf, sizeof(int) * 2 * nc);
    if (!np) return -1;
    s->pbuf = np;
    long long *ns = realloc(s->sbuf, sizeof(long long) * nc);
    if (!ns) return -1;
    s->sbuf = ns;
    s->pcap = nc;
    return 0;
}

/* 1 won (moves on the stack), 0 dead, < 0 stopped (state restored by caller) */
static int ps_search(PS *s, size_t base) {
    const int W = s->W, K = s->K;
    int start = s->nmv;
    for (;;) { /* safe groups leave at once */
        int empty = 1;
        for (int w = 0; w < W; w++) if (s->P[w]) { empty = 0; break; }
        if (empty) return 1;
        int found = -1;
        for (int k = 0; k < K && found < 0; k++) {
            const u64 *gm = ROW(s->gmask, k);
            int any = 0, ok = 1;
            for (int w = 0; w < W; w++) {
                u64 st = gm[w] & s->P[w];
                any |= st != 0;
                if (st & ~s->F[w]) { ok = 0; break; }
            }
            if (any && ok) found = k;
        }
        if (found < 0) break;
        u64 G[MAXW];
        for (int w = 0; w < W; w++) G[w] = ROW(s->gmask, found)[w] & s->P[w];
        int first = -1;
        FOR_BITS(t, G, W) {
            if (first < 0) first = t;
            else { ps_move(s, first, t); first = -1; }
        }
    }
    u64 h = key_hash(s->P, (size_t)W);
    if (tt_find(&s->tt, h, s->P, (size_t)W)) { ps_unmove_to(s, start); return 0; }
    s->nodes++;
    if (s->limit >= 0 && s->nodes > s->limit) { s->stop = -1; return -1; }
    if (s->deadline > 0 && (s->nodes & 255) == 0 && now_s() > s->deadline) { s->stop = -2; return -1; }
    int r = 0;
    if (ps_relax(s) >= 0) {
        /* the pairs of free tiles, each scored by the look-ahead after it */
        size_t cnt = 0;
        for (int k = 0; k < K; k++) {
            u64 f[MAXW];
            int c = 0;
            for (int w = 0; w < W; w++) { f[w] = ROW(s->gmask, k)[w] & s->F[w]; c += popc(f[w]); }
            if (c < 2) continue;
            if (ps_reserve(s, base + cnt + (size_t)c * (size_t)(c - 1) / 2 + 1) < 0) { s->stop = -3; return -1; }
            FOR_BITS(a, f, W) {
                FOR_BITS(b, f, W) {
                    if (b <= a) continue;
                    ps_move(s, a, b);
                    long long sc = ps_relax(s);
                    ps_unmove_to(s, s->nmv - 1);
                    if (sc < 0) continue;
                    size_t i = base + cnt++;
                    s->pbuf[2 * i] = a;
                    s->pbuf[2 * i + 1] = b;
                    s->sbuf[i] = sc;
                }
            }
        }
        /* insertion sort by score (stable: slot order among equals) */
        for (size_t i = 1; i < cnt; i++) {
            long long sv = s->sbuf[base + i];
            int a = s->pbuf[2 * (base + i)], b = s->pbuf[2 * (base + i) + 1];
            size_t j = i;
            while (j > 0 && s->sbuf[base + j - 1] > sv) {
                s->sbuf[base + j] = s->sbuf[base + j - 1];
                s->pbuf[2 * (base + j)] = s->pbuf[2 * (base + j - 1)];
                s->pbuf[2 * (base + j) + 1] = s->pbuf[2 * (base + j - 1) + 1];
                j--;
            }
            s->sbuf[base + j] = sv;
            s->pbuf[2 * (base + j)] = a;
            s->pbuf[2 * (base + j) + 1] = b;
        }
        for (size_t i = 0; i < cnt; i++) {
            int a = s->pbuf[2 * (base + i)], b = s->pbuf[2 * (base + i) + 1];
            ps_move(s, a, b);
            r = ps_search(s, base + cnt);
            if (r) break;
            ps_unmove_to(s, s->nmv - 1);
        }
        if (r == 1) return 1;
        if (r < 0) return r;
    }
    tt_insert(&s->tt, h, s->P, (size_t)W);
    ps_unmove_to(s, start);
    return 0;
}

static void ps_free(PS *s) {
    if (!s) return;
    Py_XDECREF(s->geom_ref);
    free(s->key); free(s->gmask); free(s->cand);
    free(s->ncov); free(s->nl); free(s->nr); free(s->rcov); free(s->rnl); free(s->rnr);
    free(s->mv); free(s->pbuf); free(s->sbuf);
    tt_free(&s->tt);
    free(s);
}

static void pcapsule_destructor(PyObject *cap) {
    ps_free((PS *)PyCapsule_GetPointer(cap, PCAPSULE_NAME));
}

static PyObject *py_pos_new(PyObject *self, PyObject *args) {
    PyObject *cap, *keys_o, *pres_o;
    if (!PyArg_ParseTuple(args, "OOO", &cap, &keys_o, &pres_o)) return NULL;
    Geom *g = PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!g) return NULL;
    const int n = g->n, W = g->W;
    PyObject *kf = PySequence_Fast(keys_o, "keys must be a sequence");
    if (!kf) return NULL;
    PyObject *pf = PySequence_Fast(pres_o, "present must be a sequence");
    if (!pf) { Py_DECREF(kf); return NULL; }
    if (PySequence_Fast_GET_SIZE(kf) != n || PySequence_Fast_GET_SIZE(pf) != n) {
        Py_DECREF(kf); Py_DECREF(pf);
        PyErr_SetString(PyExc_ValueError, "keys/present length differs from the layout");
        return NULL;
    }
    PS *s = calloc(1, sizeof(PS));
    if (!s) { Py_DECREF(kf); Py_DECREF(pf); return PyErr_NoMemory(); }
    Py_INCREF(cap);
    s->geom_ref = cap;
    s->g = g; s->n = n; s->W = W;
    s->key = malloc(sizeof(int) * (n + 1));
    int *pres = malloc(sizeof(int) * (n + 1));
    int *order = malloc(sizeof(int) * (n + 1));
    u64 *above = calloc((size_t)n * W + 1, sizeof(u64)), *below = calloc((size_t)n * W + 1, sizeof(u64));
    PyObject *result = NULL;
    if (!s->key || !pres || !order || !above || !below) { PyErr_NoMemory(); goto fail; }
    int K = 0;
    for (int i = 0; i < n; i++) {
        pres[i] = PyObject_IsTrue(PySequence_Fast_GET_ITEM(pf, i));
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(kf, i));
        if ((v == -1 && PyErr_Occurred()) || pres[i] < 0) goto fail;
        if (pres[i] && (v < 0 || v > 1000000)) { PyErr_SetString(PyExc_ValueError, "match key out of range"); goto fail; }
        s->key[i] = pres[i] ? (int)v : -1;
        if (pres[i] && v + 1 > K) K = (int)v + 1;
    }
    s->K = K;
    s->gmask = calloc((size_t)(K ? K : 1) * W, sizeof(u64));
    s->cand = calloc((size_t)n * W + 1, sizeof(u64));
    s->ncov = calloc(n + 1, sizeof(int)); s->nl = calloc(n + 1, sizeof(int)); s->nr = calloc(n + 1, sizeof(int));
    s->rcov = calloc(n + 1, sizeof(int)); s->rnl = calloc(n + 1, sizeof(int)); s->rnr = calloc(n + 1, sizeof(int));
    s->mv = malloc(sizeof(int) * (n + 2));
    if (!s->gmask || !s->cand || !s->ncov || !s->nl || !s->nr || !s->rcov || !s->rnl || !s->rnr || !s->mv ||
        tt_init(&s->tt) < 0 || ps_reserve(s, 4096) < 0) { PyErr_NoMemory(); goto fail; }
    for (int i = 0; i < n; i++) {
        if (!pres[i]) continue;
        SETB(s->P, i);
        SETB(ROW(s->gmask, s->key[i]), i);
        for (int k = g->off[1][i]; k < g->off[1][i + 1]; k++) s->ncov[i] += pres[g->adj[1][k]];
        for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) s->nl[i] += pres[g->adj[2][k]];
        for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) s->nr[i] += pres[g->adj[3][k]];
    }
    for (int i = 0; i < n; i++) if (ps_is_free(s, i)) SETB(s->F, i);
    /* transitive covering among standing tiles (as in solve): a tile above
       another stays standing until that one has left, so the two are never
       free together */
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && g->z[order[j]] > g->z[v]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = v;
    }
    for (int r = n - 1; r >= 0; r--) {
        int i = order[r];
        if (!pres[i]) continue;
        u64 *ai = above + (size_t)i * W;
        for (int k = g->off[1][i]; k < g->off[1][i + 1]; k++) {
            int j = g->adj[1][k];
            if (!pres[j]) continue;
            SETB(ai, j);
            for (int w = 0; w < W; w++) ai[w] |= above[(size_t)j * W + w];
        }
    }
    for (int r = 0; r < n; r++) {
        int i = order[r];
        if (!pres[i]) continue;
        u64 *bi = below + (size_t)i * W;
        for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) {
            int j = g->adj[0][k];
            if (!pres[j]) continue;
            SETB(bi, j);
            for (int w = 0; w < W; w++) bi[w] |= below[(size_t)j * W + w];
        }
    }
    for (int i = 0; i < n; i++) {
        if (!pres[i]) continue;
        u64 *ci = ROW(s->cand, i);
        for (int w = 0; w < W; w++)
            ci[w] = ROW(s->gmask, s->key[i])[w] & ~above[(size_t)i * W + w] & ~below[(size_t)i * W + w];
        CLRB(ci, i);
    }
    result = PyCapsule_New(s, PCAPSULE_NAME, pcapsule_destructor);
fail:
    Py_DECREF(kf); Py_DECREF(pf);
    free(pres); free(order); free(above); free(below);
    if (!result) ps_free(s);
    return result;
}

static PyObject *py_pos_run(PyObject *self, PyObject *args) {
    PyObject *cap;
    long long budget;
    double seconds;
    if (!PyArg_ParseTuple(args, "OLd", &cap, &budget, &seconds)) return NULL;
    PS *s = PyCapsule_GetPointer(cap, PCAPSULE_NAME);
    if (!s) return NULL;
    int r = 0, odd = 0;
    for (int k = 0; k < s->K; k++) {
        int c = 0;
        for (int w = 0; w < s->W; w++) c += popc(ROW(s->gmask, k)[w] & s->P[w]);
        if (c % 2) odd = 1;
    }
    s->nodes = 0;
    s->limit = budget;
    s->stop = 0;
    s->deadline = seconds >= 0 ? now_s() + seconds : 0;
    if (seconds >= 0 && s->deadline <= 0) s->deadline = 1e-9;
    if (!odd) {
        Py_BEGIN_ALLOW_THREADS
        r = ps_search(s, 0);
        Py_END_ALLOW_THREADS
    }
    if (r < 0 && s->stop == -3) { ps_unmove_to(s, 0); return PyErr_NoMemory(); }
    PyObject *moves = PyList_New(0);
    if (!moves) { ps_unmove_to(s, 0); return NULL; }
    if (r == 1) {
        for (int i = 0; i < s->nmv; i++) {
            PyObject *m = Py_BuildValue("(ii)", s->mv[2 * i], s->mv[2 * i + 1]);
            if (!m || PyList_Append(moves, m) < 0) { Py_XDECREF(m); Py_DECREF(moves); ps_unmove_to(s, 0); return NULL; }
            Py_DECREF(m);
        }
    }
    ps_unmove_to(s, 0);
    return Py_BuildValue("(iNL)", r == 1 ? 1 : (r == 0 ? 0 : s->stop), moves, s->nodes);
}

static PyMethodDef methods[] = {
    {"prepare", py_prepare, METH_VARARGS,
     "prepare(z, covers, covered_by, left, right) -> capsule holding the geometry tables"},
    {"solve", py_solve, METH_VARARGS,
     "solve(capsule, keys, present, node_limit, lazy_budget=0, restart0=0, seconds=-1) -> (code, moves, "
     "nodes); code 1 solvable, 0 not, -1 node limit hit (node_limit < 0: no limit), -2 time up "
     "(seconds < 0: no time limit)"},
    {"pair_new", py_pair_new, METH_VARARGS,
     "pair_new(capsule, keys, present, lazy_budget, restart0) -> capsule of a pairing search that resumes"},
    {"pair_run", py_pair_run, METH_VARARGS,
     "pair_run(qcapsule, node_cap, seconds) -> (code, moves, nodes in all); code 1 solvable, 0 not, "
     "-1 node cap reached (node_cap < 0: none), -2 time up (seconds < 0: none)"},
    {"pos_new", py_pos_new, METH_VARARGS,
     "pos_new(capsule, keys, present) -> capsule of a position search (keeps its dead positions)"},
    {"pos_run", py_pos_run, METH_VARARGS,
     "pos_run(pcapsule, budget, seconds) -> (code, moves, nodes); code 1 solvable, 0 not, "
     "-1 budget spent (budget < 0: none), -2 time up (seconds < 0: none)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_solvercore",
    "C core of companion.solver (exact mahjong-solitaire solver).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__solvercore(void) { return PyModule_Create(&moduledef); }
