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
#include <signal.h>
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

/* Ctrl+C during a search.  The searches run without the GIL, so Python's
   own SIGINT handler (which only sets a flag for the interpreter) is not
   looked at until they return: a long turn could keep Ctrl+C waiting for
   minutes.  watch_sigint() puts a C handler in its place that sets
   `sigint_seen`, which both searches check at every node and stop on as on
   their deadline; unwatch_sigint() puts Python's handler back and says
   whether Ctrl+C came (the caller then raises KeyboardInterrupt).  Called by
   companion.solver around its runs, on the main thread only. */
static volatile sig_atomic_t sigint_seen = 0;
static PyOS_sighandler_t sigint_before = NULL;
static int sigint_watched = 0;

static void on_sigint(int signo) {
    (void)signo;
    sigint_seen = 1;
}

static PyObject *py_watch_sigint(PyObject *self, PyObject *noargs) {
    sigint_seen = 0;
    if (!sigint_watched) {
        sigint_before = PyOS_setsig(SIGINT, on_sigint);
        sigint_watched = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *py_unwatch_sigint(PyObject *self, PyObject *noargs) {
    if (sigint_watched) {
        PyOS_setsig(SIGINT, sigint_before);
        sigint_watched = 0;
    }
    int seen = sigint_seen;
    sigint_seen = 0;
    return PyBool_FromLong(seen);
}

/* the now_s() instant `seconds` from now; 0 (no deadline) when seconds < 0 */
static double deadline_after(double seconds) {
    if (seconds < 0) return 0;
    double d = now_s() + seconds;
    return d > 0 ? d : 1e-9;
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
#define ALWAYS_INLINE __forceinline
#else
#define ALWAYS_INLINE inline __attribute__((always_inline))
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

/* ------------------------------------------------------------------ board
 *
 * The position both searches play on: the standing tiles (P) and the free
 * ones (F), and per tile how many standing tiles lie on it (ncov) and beside
 * it on the left (nl) and on the right (nr); a tile is free when it stands,
 * nothing lies on it and one of its sides is clear.  Also the match groups
 * (key, gmask) and the scratch counters of the relaxed look-ahead.
 */

#define ROWW(arr, i, W) ((arr) + (size_t)(i) * (size_t)(W))

typedef struct {
    PyObject *geom_ref; /* the geometry capsule, held while the board lives */
    const Geom *g;
    int n, W, K;
    int *key;          /* match group per slot, -1 where absent */
    u64 *gmask;        /* K * W: the tiles of each group */
    u64 P[MAXW], F[MAXW];
    int *ncov, *nl, *nr;
    int *rcov, *rnl, *rnr; /* relaxation scratch */
} Board;

static inline int board_is_free(const Board *bd, int j) {
    return BIT(bd->P, j) && bd->ncov[j] == 0 && (bd->nl[j] == 0 || bd->nr[j] == 0);
}

static inline void board_refresh(Board *bd, int j) {
    if (board_is_free(bd, j)) SETB(bd->F, j); else CLRB(bd->F, j);
}

static void board_take(Board *bd, int i) {
    const Geom *g = bd->g;
    CLRB(bd->P, i);
    CLRB(bd->F, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; bd->ncov[j]--; board_refresh(bd, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; bd->nr[j]--; board_refresh(bd, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; bd->nl[j]--; board_refresh(bd, j); }
}

static void board_put(Board *bd, int i) {
    const Geom *g = bd->g;
    SETB(bd->P, i);
    for (int k = g->off[0][i]; k < g->off[0][i + 1]; k++) { int j = g->adj[0][k]; bd->ncov[j]++; board_refresh(bd, j); }
    for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) { int j = g->adj[2][k]; bd->nr[j]++; board_refresh(bd, j); }
    for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) { int j = g->adj[3][k]; bd->nl[j]++; board_refresh(bd, j); }
    board_refresh(bd, i);
}

static inline int board_empty(const Board *bd) {
    for (int w = 0; w < bd->W; w++) if (bd->P[w]) return 0;
    return 1;
}

/* Relaxed look-ahead: every free tile with a possible partner available (free
   or already gone) leaves, round after round, partners reused.  A tile in U
   (uncommitted) may pair with the tiles of its row of cand that are in U; any
   other one only with its partner (U NULL: no commitments, every tile pairs
   with its row of cand; inlined, each caller gets its own copy).  Returns -1 when some tile never leaves (a
   dead position; the free tiles that never found a partner are put in
   starved), else the sum over tiles of the round each leaves in (small =
   easy). */
static ALWAYS_INLINE long long board_relax(Board *bd, const u64 *U, const u64 *cand, const int *partner, u64 *starved) {
    const Geom *g = bd->g;
    const int W = bd->W, n = bd->n;
    u64 Fr[MAXW], R[MAXW], check[MAXW], avail[MAXW], rem[MAXW], nw[MAXW];
    memcpy(bd->rcov, bd->ncov, sizeof(int) * n);
    memcpy(bd->rnl, bd->nl, sizeof(int) * n);
    memcpy(bd->rnr, bd->nr, sizeof(int) * n);
    int *ncov = bd->rcov, *nl = bd->rnl, *nr = bd->rnr;
    for (int w = 0; w < W; w++) { Fr[w] = bd->F[w]; R[w] = 0; check[w] = Fr[w]; }
    long long rnd = 0, total = 0;
    u64 ua[MAXW];
    for (;;) {
        int cnt = 0;
        for (int w = 0; w < W; w++) { avail[w] = Fr[w] | R[w]; ua[w] = U ? avail[w] & U[w] : avail[w]; rem[w] = 0; check[w] &= Fr[w]; }
        FOR_BITS(t, check, W) {
            int ok = 0;
            if (!U || BIT(U, t)) {
                const u64 *cm = ROWW(cand, t, W);
                for (int w = 0; w < W; w++) if (cm[w] & ua[w]) { ok = 1; break; }
            } else {
                ok = (int)BIT(avail, partner[t]);
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
                if (--ncov[j] == 0 && (nl[j] == 0 || nr[j] == 0) && BIT(bd->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[2][t]; k < g->off[2][t + 1]; k++) {
                int j = g->adj[2][k];
                if (--nr[j] == 0 && ncov[j] == 0 && BIT(bd->P, j) && !BIT(R, j)) SETB(nw, j);
            }
            for (int k = g->off[3][t]; k < g->off[3][t + 1]; k++) {
                int j = g->adj[3][k];
                if (--nl[j] == 0 && ncov[j] == 0 && BIT(bd->P, j) && !BIT(R, j)) SETB(nw, j);
            }
        }
        /* only tiles of groups that gained an available tile can change */
        for (int w = 0; w < W; w++) { nw[w] &= ~Fr[w] & ~R[w]; Fr[w] |= nw[w]; check[w] = 0; }
        FOR_BITS(t, nw, W) {
            const u64 *gm = ROWW(bd->gmask, bd->key[t], W);
            for (int w = 0; w < W; w++) check[w] |= gm[w];
        }
    }
    int dead = 0;
    for (int w = 0; w < W; w++) if (R[w] != bd->P[w]) dead = 1;
    if (!dead) return total;
    for (int w = 0; w < W; w++) starved[w] = Fr[w] & ~R[w];
    return -1;
}

static void board_free(Board *bd) {
    Py_XDECREF(bd->geom_ref);
    free(bd->key); free(bd->gmask);
    free(bd->ncov); free(bd->nl); free(bd->nr); free(bd->rcov); free(bd->rnl); free(bd->rnr);
}

/* The board of keys / present (objects the caller owns) on the geometry of
   the capsule geom (made by prepare): 0, or -1 with an exception set (what
   was allocated is freed by board_free). */
static int board_setup(Board *bd, PyObject *geom, PyObject *keys_o, PyObject *pres_o) {
    const Geom *g = PyCapsule_GetPointer(geom, CAPSULE_NAME);
    if (!g) return -1;
    Py_INCREF(geom);
    bd->geom_ref = geom;
    const int n = g->n, W = g->W;
    bd->g = g; bd->n = n; bd->W = W;
    PyObject *kf = PySequence_Fast(keys_o, "keys must be a sequence");
    if (!kf) return -1;
    PyObject *pf = PySequence_Fast(pres_o, "present must be a sequence");
    if (!pf) { Py_DECREF(kf); return -1; }
    int ret = -1;
    if (PySequence_Fast_GET_SIZE(kf) != n || PySequence_Fast_GET_SIZE(pf) != n) {
        PyErr_SetString(PyExc_ValueError, "keys/present length differs from the layout");
        goto out;
    }
    bd->key = malloc(sizeof(int) * (n + 1));
    if (!bd->key) { PyErr_NoMemory(); goto out; }
    int K = 0;
    for (int i = 0; i < n; i++) {
        int pres = PyObject_IsTrue(PySequence_Fast_GET_ITEM(pf, i));
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(kf, i));
        if ((v == -1 && PyErr_Occurred()) || pres < 0) goto out;
        if (pres && (v < 0 || v > 1000000)) { PyErr_SetString(PyExc_ValueError, "match key out of range"); goto out; }
        bd->key[i] = pres ? (int)v : -1;
        if (pres && v + 1 > K) K = (int)v + 1;
    }
    bd->K = K;
    bd->gmask = calloc((size_t)(K ? K : 1) * (size_t)W, sizeof(u64));
    bd->ncov = calloc(n + 1, sizeof(int)); bd->nl = calloc(n + 1, sizeof(int)); bd->nr = calloc(n + 1, sizeof(int));
    bd->rcov = calloc(n + 1, sizeof(int)); bd->rnl = calloc(n + 1, sizeof(int)); bd->rnr = calloc(n + 1, sizeof(int));
    if (!bd->gmask || !bd->ncov || !bd->nl || !bd->nr || !bd->rcov || !bd->rnl || !bd->rnr) { PyErr_NoMemory(); goto out; }
    for (int i = 0; i < n; i++) {
        if (bd->key[i] < 0) continue;
        SETB(bd->P, i);
        SETB(ROWW(bd->gmask, bd->key[i], W), i);
    }
    for (int i = 0; i < n; i++) {
        if (!BIT(bd->P, i)) continue;
        for (int k = g->off[1][i]; k < g->off[1][i + 1]; k++) bd->ncov[i] += (int)BIT(bd->P, g->adj[1][k]);
        for (int k = g->off[2][i]; k < g->off[2][i + 1]; k++) bd->nl[i] += (int)BIT(bd->P, g->adj[2][k]);
        for (int k = g->off[3][i]; k < g->off[3][i + 1]; k++) bd->nr[i] += (int)BIT(bd->P, g->adj[3][k]);
    }
    for (int i = 0; i < n; i++) if (board_is_free(bd, i)) SETB(bd->F, i);
    ret = 0;
out:
    Py_DECREF(kf); Py_DECREF(pf);
    return ret;
}

/* Transitive closure of geometry table t (0 covers, 1 covered_by) among the
   standing tiles: out[i] (n * W, zeroed) gets the standing tiles of row i and,
   through standing tiles, theirs.  order: the slots by z; taken from the last
   (reverse) or from the first, so that every row is complete before it is
   used. */
static void board_closure(const Board *bd, const int *order, int reverse, int t, u64 *out) {
    const Geom *g = bd->g;
    const int n = bd->n, W = bd->W;
    for (int r = 0; r < n; r++) {
        int i = order[reverse ? n - 1 - r : r];
        if (!BIT(bd->P, i)) continue;
        u64 *oi = ROWW(out, i, W);
        for (int k = g->off[t][i]; k < g->off[t][i + 1]; k++) {
            int j = g->adj[t][k];
            if (!BIT(bd->P, j)) continue;
            SETB(oi, j);
            for (int w = 0; w < W; w++) oi[w] |= ROWW(out, j, W)[w];
        }
    }
}

/* Per standing tile, the standing tiles it could ever leave with (cand, n * W,
   zeroed): same group, not in its stack (one above the other, directly or
   through standing tiles between: a tile stays standing until every tile
   above it has left, so the two are never free together).  above (n * W,
   zeroed) gets, per tile, the standing tiles that must leave before it can be
   free.  0, or -1 out of memory. */
static int board_partners(const Board *bd, u64 *above, u64 *cand) {
    const Geom *g = bd->g;
    const int n = bd->n, W = bd->W;
    int *order = calloc((size_t)n + 1, sizeof(int));
    u64 *below = calloc((size_t)n * W + 1, sizeof(u64));
    if (!order || !below) { free(order); free(below); return -1; }
    /* order by z (stable), then transitive covers */
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) { /* insertion sort, stable; n is small */
        int v = order[i], j = i - 1;
        while (j >= 0 && g->z[order[j]] > g->z[v]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = v;
    }
    board_closure(bd, order, 1, 1, above); /* covered_by, from the top down */
    board_closure(bd, order, 0, 0, below); /* covers, from the bottom up */
    for (int i = 0; i < n; i++) {
        if (!BIT(bd->P, i)) continue;
        u64 *ci = ROWW(cand, i, W);
        for (int w = 0; w < W; w++)
            ci[w] = ROWW(bd->gmask, bd->key[i], W)[w] & ~ROWW(above, i, W)[w] & ~ROWW(below, i, W)[w];
        CLRB(ci, i);
    }
    free(order); free(below);
    return 0;
}

/* ------------------------------------------------------------------ search state */

typedef struct { int kind, a, b; } LogE; /* kind 0 remove, 1 commit, 2 remove committed, 3 dead pair */

typedef struct {
    Board bd;          /* the position, match groups and relaxation scratch */
    u64 *above;        /* n * W */
    u64 *candmask;     /* n * W: possible partners: same group, not in the same stack,
                          not known to lead to a dead end from the current position */
    u64 U[MAXW];
    u64 dirtyT[MAXW];  /* tiles of groups changed since their last check in propagate's step C */
    int *partner;
    LogE *log;
    int nlog, caplog;
    long long nodes, limit;
    int exhausted, oom;
    double deadline; /* 0: none */
    int timeup;
    int odd;                         /* some group has an odd count: no win */
    int phase;                       /* 0: nothing run yet; 1: the lazy run is done */
    long long lazy_budget, restart0, next_budget;
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

#define ROW(arr, i) ROWW(arr, i, s->bd.W)

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
    const u64 *gm = ROW(s->bd.gmask, s->bd.key[a]);
    for (int w = 0; w < s->bd.W; w++) s->dirtyT[w] |= gm[w];
}

static void do_remove(S *s, int a, int b) {
    int committed = s->partner[a] == b;
    mark_dirty(s, a);
    board_take(&s->bd, a);
    board_take(&s->bd, b);
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
            board_put(&s->bd, e.b);
            board_put(&s->bd, e.a);
            if (e.kind == 0) { SETB(s->U, e.a); SETB(s->U, e.b); }
        }
    }
}

/* ------------------------------------------------------------------ reasoning */

static int cycle(S *s, int a, int b) {
    const int W = s->bd.W;
    u64 Sx[MAXW], done[MAXW];
    for (int w = 0; w < W; w++) { Sx[w] = (ROW(s->above, a)[w] | ROW(s->above, b)[w]) & s->bd.P[w]; done[w] = 0; }
    for (;;) {
        u64 todo[MAXW];
        int any = 0;
        for (int w = 0; w < W; w++) { todo[w] = Sx[w] & ~s->U[w] & ~done[w]; any |= todo[w] != 0; }
        if (!any) break;
        FOR_BITS(x, todo, W) {
            SETB(done, x);
            int y = s->partner[x];
            const u64 *ay = ROW(s->above, y);
            for (int w = 0; w < W; w++) Sx[w] |= ay[w] & s->bd.P[w];
            if (BIT(s->bd.P, y)) SETB(Sx, y);
        }
    }
    if (BIT(Sx, a) || BIT(Sx, b)) { s->wt[s->bd.key[a]]++; return 1; }
    return 0;
}

/* the relaxed look-ahead of the current position (commitments included):
   score >= 0, or -1 on a dead end, where the starved tiles (free, but no
   partner ever available) get the blame */
static long long relax(S *s) {
    u64 starved[MAXW];
    long long r = board_relax(&s->bd, s->U, s->candmask, s->partner, starved);
    if (r < 0) FOR_BITS(t, starved, s->bd.W) s->wt[s->bd.key[t]]++;
    return r;
}

static long long propagate(S *s) {
    const int W = s->bd.W;
    u64 snap[MAXW];
    for (;;) {
        int progress = 0;
        /* A */
        for (int w = 0; w < W; w++) snap[w] = s->bd.F[w] & ~s->U[w];
        FOR_BITS(t, snap, W) {
            int p = s->partner[t];
            if (t < p && BIT(s->bd.F, p) && BIT(s->bd.F, t)) { do_remove(s, t, p); progress = 1; }
        }
        /* B */
        for (int k = 0; k < s->bd.K; k++) {
            const u64 *gm = ROW(s->bd.gmask, k);
            int any = 0, allfree = 1;
            for (int w = 0; w < W; w++) {
                snap[w] = gm[w] & s->U[w];
                any |= snap[w] != 0;
                if (snap[w] & ~s->bd.F[w]) allfree = 0;
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
            if (c == 0) s->wt[s->bd.key[t]]++;
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
    const int W = s->bd.W;
    size_t len = 0;
    u64 C[MAXW];
    for (int w = 0; w < W; w++) { s->keybuf[len++] = s->bd.P[w]; C[w] = s->bd.P[w] & ~s->U[w]; }
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
    const int W = s->bd.W;
    const u64 *gm = ROW(s->bd.gmask, k);
    u64 G[MAXW], FU[MAXW];
    int anyG = 0, anyF = 0;
    for (int w = 0; w < W; w++) { G[w] = gm[w] & s->U[w]; FU[w] = G[w] & s->bd.F[w]; anyG |= G[w] != 0; anyF |= FU[w] != 0; }
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

#define LAZY_UNKNOWN_NV 2

/* returns 0 dead, 1 done, 2 branch (tile in *a_out, partners in opts[], *nopt of them) */
static int lookahead(S *s, int *a_out, int *opts, int *nopt) {
    Opt *viable = malloc(sizeof(Opt) * (s->bd.n + 1));
    if (!viable) { s->oom = 1; return 0; }
    int ret;
    for (;;) {
        s->la_id++;
        int forced = 0;
        if (!s->lazy) {
            int best_a = -1, best_nv = 0;
            long long best_reg = 0, best_w = 1;
            for (int k = 0; k < s->bd.K && !forced; k++) {
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
                if (best_a < 0) { ret = board_empty(&s->bd) ? 1 : 0; goto out; }
                *a_out = best_a; *nopt = best_nv; ret = 2; goto out;
            }
        } else {
            /* lazy: rank groups by their last evaluation (maybe from another
               position), evaluate the best one afresh, until the best is fresh */
            for (;;) {
                int best = -1, best_nv = 0;
                long long best_reg = 0, best_w = 1;
                for (int k = 0; k < s->bd.K; k++) {
                    const u64 *gm = ROW(s->bd.gmask, k);
                    int any = 0;
                    for (int w = 0; w < s->bd.W; w++) if (gm[w] & s->U[w]) { any = 1; break; }
                    if (!any) continue;
                    int nv = s->c_known[k] ? s->c_nv[k] : LAZY_UNKNOWN_NV;
                    long long reg = s->c_known[k] ? s->c_reg[k] : 0;
                    if (best < 0 || better(nv, reg, s->wt[k], best_nv, best_reg, best_w)) {
                        best = k; best_nv = nv; best_reg = reg; best_w = s->wt[k];
                    }
                }
                if (best < 0) { ret = board_empty(&s->bd) ? 1 : 0; goto out; }
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
        if (board_empty(&s->bd)) { ret = 1; goto out; }
    }
out:
    free(viable);
    return ret;
}

/* 1 solved, 0 failed, -1 limit / out of memory */
static int search(S *s) {
    s->nodes++;
    if (s->limit >= 0 && s->nodes > s->limit) { s->exhausted = 1; return -1; }
    if ((s->deadline > 0 && (s->nodes & 63) == 0 && now_s() > s->deadline) || sigint_seen) {
        s->timeup = 1;
        return -1;
    }
    if (s->timeup || s->oom) return -1;
    int mark = s->nlog;
    if (propagate(s) < 0) { undo(s, mark); return s->oom ? -1 : 0; }
    if (board_empty(&s->bd)) return 1;
    size_t len = state_key(s);
    u64 h = key_hash(s->keybuf, len);
    if (tt_find(&s->tt, h, s->keybuf, len)) { undo(s, mark); return 0; }
    /* one block per node: the options, then a copy of the entry key */
    size_t nopt_bytes = sizeof(u64) * (size_t)((s->bd.n + 2) / 2 + 1);
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
    board_free(&s->bd);
    free(s->above); free(s->candmask);
    free(s->partner); free(s->wt); free(s->log);
    free(s->c_known); free(s->c_stamp); free(s->c_reg); free(s->c_nv); free(s->c_a); free(s->c_off); free(s->c_vals);
    free(s->keybuf);
    if (s->tt.hashes || s->tt.offs || s->tt.arena) tt_free(&s->tt);
    free(s);
}

/* the search state for keys / present (sequences of the layout's length); NULL with an exception set */
static S *pair_setup(PyObject *geom, PyObject *keys_o, PyObject *pres_o) {
    S *s = calloc(1, sizeof(S));
    if (!s) return (S *)PyErr_NoMemory();
    s->limit = -1;
    if (board_setup(&s->bd, geom, keys_o, pres_o) < 0) { pair_free(s); return NULL; }
    const int n = s->bd.n, W = s->bd.W, K = s->bd.K;
    size_t nw = (size_t)W;
    s->above = calloc((size_t)n * nw + 1, sizeof(u64));
    s->candmask = calloc((size_t)n * nw + 1, sizeof(u64));
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
    int ttok = tt_init(&s->tt);
    if (!s->above || !s->candmask || !s->partner || !s->wt || !s->c_known || !s->c_stamp || !s->c_reg || !s->c_nv ||
        !s->c_a || !s->c_off || !s->c_vals || !s->log || !s->keybuf || ttok < 0 ||
        board_partners(&s->bd, s->above, s->candmask) < 0) {
        PyErr_NoMemory();
        pair_free(s);
        return NULL;
    }
    for (int k = 0; k <= K; k++) s->wt[k] = 1;
    for (int i = 0; i < n; i++) s->partner[i] = -1;
    for (int w = 0; w < W; w++) { s->U[w] = s->bd.P[w]; s->dirtyT[w] = s->bd.P[w]; }
    int odd = 0, off = 0;
    for (int k = 0; k < K; k++) {
        int c = 0;
        for (int w = 0; w < W; w++) c += popc(ROW(s->bd.gmask, k)[w]);
        if (c % 2) odd = 1;
        s->c_off[k] = off;
        off += c;
    }
    s->odd = odd;
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

/* append the move (a, b) to the list moves: 0, or -1 with an exception set */
static int moves_append(PyObject *moves, int a, int b) {
    PyObject *m = Py_BuildValue("(ii)", a, b);
    int r = m ? PyList_Append(moves, m) : -1;
    Py_XDECREF(m);
    return r;
}

static PyObject *pair_moves(S *s) {
    PyObject *moves = PyList_New(0);
    if (!moves) return NULL;
    for (int i = 0; i < s->nlog; i++) {
        if (s->log[i].kind == 1 || s->log[i].kind == 3) continue;
        if (moves_append(moves, s->log[i].a, s->log[i].b) < 0) { Py_DECREF(moves); return NULL; }
    }
    return moves;
}

/* the arguments of pair_run / pos_run: (capsule, budget, seconds) */
typedef struct { long long budget; double deadline; } RunArgs;

/* the capsule's pointer (name: its kind) and, in *ra, the budget and the
   deadline the seconds give; NULL with an exception set */
static void *run_args(PyObject *args, const char *name, RunArgs *ra) {
    PyObject *cap;
    double seconds;
    if (!PyArg_ParseTuple(args, "OLd", &cap, &ra->budget, &seconds)) return NULL;
    ra->deadline = deadline_after(seconds);
    return PyCapsule_GetPointer(cap, name);
}

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *cap, *keys_o, *pres_o;
    long long limit;
    long long lazy_budget = 0, restart0 = 0;
    double seconds = -1.0;
    if (!PyArg_ParseTuple(args, "OOOL|LLd", &cap, &keys_o, &pres_o, &limit, &lazy_budget, &restart0, &seconds))
        return NULL;
    S *s = pair_setup(cap, keys_o, pres_o);
    if (!s) return NULL;
    s->lazy_budget = lazy_budget;
    s->restart0 = restart0;
    s->deadline = deadline_after(seconds);
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
    S *s = pair_setup(cap, keys_o, pres_o);
    if (!s) return NULL;
    s->lazy_budget = lazy_budget;
    s->restart0 = restart0;
    PyObject *q = PyCapsule_New(s, QCAPSULE_NAME, qcapsule_destructor);
    if (!q) pair_free(s);
    return q;
}

static PyObject *py_pair_run(PyObject *self, PyObject *args) {
    RunArgs ra;
    S *s = run_args(args, QCAPSULE_NAME, &ra);
    if (!s) return NULL;
    if (s->oom) return PyErr_NoMemory();
    s->deadline = ra.deadline;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = pair_continue(s, ra.budget);
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
    Board bd;     /* the position, match groups and relaxation scratch */
    u64 *cand;    /* n * W: same group, not in the same stack (static) */
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


static void ps_move(PS *s, int a, int b) {
    board_take(&s->bd, a);
    board_take(&s->bd, b);
    s->mv[2 * s->nmv] = a;
    s->mv[2 * s->nmv + 1] = b;
    s->nmv++;
}

static void ps_unmove_to(PS *s, int mark) {
    while (s->nmv > mark) {
        s->nmv--;
        board_put(&s->bd, s->mv[2 * s->nmv + 1]);
        board_put(&s->bd, s->mv[2 * s->nmv]);
    }
}

/* the relaxed look-ahead of the current position (no commitments: every
   standing tile may pair with its possible partners, cand): -1 dead, else
   the score (small = easy) */
static long long ps_relax(PS *s) {
    u64 starved[MAXW];
    return board_relax(&s->bd, NULL, s->cand, NULL, starved);
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
    const int W = s->bd.W, K = s->bd.K;
    int start = s->nmv;
    for (;;) { /* safe groups leave at once */
        if (board_empty(&s->bd)) return 1;
        int found = -1;
        for (int k = 0; k < K && found < 0; k++) {
            const u64 *gm = ROW(s->bd.gmask, k);
            int any = 0, ok = 1;
            for (int w = 0; w < W; w++) {
                u64 st = gm[w] & s->bd.P[w];
                any |= st != 0;
                if (st & ~s->bd.F[w]) { ok = 0; break; }
            }
            if (any && ok) found = k;
        }
        if (found < 0) break;
        u64 G[MAXW];
        for (int w = 0; w < W; w++) G[w] = ROW(s->bd.gmask, found)[w] & s->bd.P[w];
        int first = -1;
        FOR_BITS(t, G, W) {
            if (first < 0) first = t;
            else { ps_move(s, first, t); first = -1; }
        }
    }
    u64 h = key_hash(s->bd.P, (size_t)W);
    if (tt_find(&s->tt, h, s->bd.P, (size_t)W)) { ps_unmove_to(s, start); return 0; }
    s->nodes++;
    if (s->limit >= 0 && s->nodes > s->limit) { s->stop = -1; return -1; }
    if ((s->deadline > 0 && (s->nodes & 255) == 0 && now_s() > s->deadline) || sigint_seen) {
        s->stop = -2;
        return -1;
    }
    int r = 0;
    if (ps_relax(s) >= 0) {
        /* the pairs of free tiles, each scored by the look-ahead after it */
        size_t cnt = 0;
        for (int k = 0; k < K; k++) {
            u64 f[MAXW];
            int c = 0;
            for (int w = 0; w < W; w++) { f[w] = ROW(s->bd.gmask, k)[w] & s->bd.F[w]; c += popc(f[w]); }
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
    tt_insert(&s->tt, h, s->bd.P, (size_t)W);
    ps_unmove_to(s, start);
    return 0;
}

static void ps_free(PS *s) {
    if (!s) return;
    board_free(&s->bd);
    free(s->cand); free(s->mv); free(s->pbuf); free(s->sbuf);
    if (s->tt.hashes || s->tt.offs || s->tt.arena) tt_free(&s->tt);
    free(s);
}

static void pcapsule_destructor(PyObject *cap) {
    ps_free((PS *)PyCapsule_GetPointer(cap, PCAPSULE_NAME));
}

static PyObject *py_pos_new(PyObject *self, PyObject *args) {
    PyObject *cap, *keys_o, *pres_o;
    if (!PyArg_ParseTuple(args, "OOO", &cap, &keys_o, &pres_o)) return NULL;
    PS *s = calloc(1, sizeof(PS));
    PyObject *result = s ? PyCapsule_New(s, PCAPSULE_NAME, pcapsule_destructor) : PyErr_NoMemory();
    if (!result) { free(s); return NULL; }
    /* from here on the capsule owns s: dropping it frees s */
    if (board_setup(&s->bd, cap, keys_o, pres_o) < 0) { Py_DECREF(result); return NULL; }
    const int n = s->bd.n, W = s->bd.W;
    s->cand = calloc((size_t)n * W + 1, sizeof(u64));
    s->mv = malloc(sizeof(int) * (n + 2));
    /* the possible partners by transitive covering among standing tiles (as
       in solve): a tile above another stays standing until that one has
       left, so the two are never free together */
    u64 *above = calloc((size_t)n * W + 1, sizeof(u64));
    int ok = above && s->cand && s->mv && tt_init(&s->tt) == 0 && ps_reserve(s, 4096) == 0 &&
             board_partners(&s->bd, above, s->cand) == 0;
    free(above);
    if (!ok) { Py_DECREF(result); return PyErr_NoMemory(); }
    return result;
}

static PyObject *py_pos_run(PyObject *self, PyObject *args) {
    RunArgs ra;
    PS *s = run_args(args, PCAPSULE_NAME, &ra);
    if (!s) return NULL;
    int r = 0, odd = 0;
    for (int k = 0; k < s->bd.K; k++) {
        int c = 0;
        for (int w = 0; w < s->bd.W; w++) c += popc(ROW(s->bd.gmask, k)[w] & s->bd.P[w]);
        if (c % 2) odd = 1;
    }
    s->nodes = 0;
    s->limit = ra.budget;
    s->stop = 0;
    s->deadline = ra.deadline;
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
            if (moves_append(moves, s->mv[2 * i], s->mv[2 * i + 1]) < 0) { Py_DECREF(moves); ps_unmove_to(s, 0); return NULL; }
        }
    }
    ps_unmove_to(s, 0);
    return Py_BuildValue("(iNL)", r == 1 ? 1 : (r == 0 ? 0 : s->stop), moves, s->nodes);
}

static PyMethodDef methods[] = {
    {"watch_sigint", py_watch_sigint, METH_NOARGS,
     "watch_sigint(): Ctrl+C now stops a search as its deadline would (main thread only)"},
    {"unwatch_sigint", py_unwatch_sigint, METH_NOARGS,
     "unwatch_sigint() -> bool: Python's SIGINT handler back; whether Ctrl+C came while watched"},
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
