/*
 * Baseline: the plain 4 x 16-bit pigeonhole index (k = 3) in C, as most
 * simhash deployments write it: table i holds every fingerprint rotated left
 * by 16 i bits (block i on top), sorted; a query binary-searches the run
 * sharing its top 16 bits in each table and checks popcount(x ^ q) <= 3,
 * counting a match only in the first table whose block matches.
 *
 * Reads the dataset written by bench/index/data.ts. Prints one JSON object.
 * Build: gcc -O3 -march=native -o pigeonhole pigeonhole.c
 * Run:   ./pigeonhole DATA [passes]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline uint64_t rotl(uint64_t x, int r) { return r == 0 ? x : (x << r) | (x >> (64 - r)); }

static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n) {
  size_t count[65536];
  for (int pass = 0; pass < 4; pass++) {
    int shift = pass * 16;
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) count[(a[i] >> shift) & 0xffff]++;
    size_t sum = 0;
    for (int d = 0; d < 65536; d++) { size_t c = count[d]; count[d] = sum; sum += c; }
    for (size_t i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 0xffff]++] = a[i];
    memcpy(a, tmp, n * sizeof *a);
  }
}

static size_t lower_bound(const uint64_t *a, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s DATA [passes]\n", argv[0]); return 2; }
  int passes = argc > 2 ? atoi(argv[2]) : 5;
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  uint32_t head[4];
  if (fread(head, 4, 4, f) != 4 || head[0] != 0x44424853u) { fprintf(stderr, "bad dataset\n"); return 1; }
  size_t n = head[1], q = head[2];
  uint32_t *raw = malloc((n + q) * 8);
  if (fread(raw, 8, n + q, f) != n + q) { fprintf(stderr, "short dataset\n"); return 1; }
  fclose(f);
  uint64_t *fps = malloc(n * 8), *qs = malloc(q * 8);
  for (size_t i = 0; i < n; i++) fps[i] = ((uint64_t)raw[2 * i] << 32) | raw[2 * i + 1];
  for (size_t i = 0; i < q; i++) qs[i] = ((uint64_t)raw[2 * (n + i)] << 32) | raw[2 * (n + i) + 1];
  free(raw);

  struct rusage ru0;
  getrusage(RUSAGE_SELF, &ru0);
  double t0 = now_ms();
  uint64_t *tables[4];
  uint64_t *tmp = malloc(n * 8);
  for (int t = 0; t < 4; t++) {
    tables[t] = malloc(n * 8);
    for (size_t i = 0; i < n; i++) tables[t][i] = rotl(fps[i], 16 * t);
    radix_sort(tables[t], tmp, n);
  }
  free(tmp);
  double build_ms = now_ms() - t0;
  struct rusage ru1;
  getrusage(RUSAGE_SELF, &ru1);

  double *rates = malloc(sizeof(double) * (passes + 1));
  uint64_t hits = 0, candidates = 0;
  for (int p = 0; p <= passes; p++) {
    hits = 0;
    candidates = 0;
    double s = now_ms();
    for (size_t i = 0; i < q; i++) {
      for (int t = 0; t < 4; t++) {
        uint64_t key = rotl(qs[i], 16 * t);
        uint64_t prefix = key >> 48;
        const uint64_t *a = tables[t];
        for (size_t j = lower_bound(a, n, prefix << 48); j < n && (a[j] >> 48) == prefix; j++) {
          candidates++;
          uint64_t d = a[j] ^ key;
          if (__builtin_popcountll(d) > 3) continue;
          /* Report only from the first table whose top block matches. */
          uint64_t orig = rotl(d, (64 - 16 * t) & 63);
          int first = 0;
          while (((orig >> (48 - 16 * first)) & 0xffff) != 0) first++;
          if (first == t) hits++;
        }
      }
    }
    rates[p] = q / ((now_ms() - s) / 1e3);
  }
  /* pass 0 is the warm-up */
  qsort(rates + 1, passes, sizeof(double), cmp_double);
  double med = passes % 2 ? rates[1 + passes / 2] : (rates[passes / 2] + rates[passes / 2 + 1]) / 2;
  printf("{\"impl\":\"c-pigeonhole-4x16\",\"n\":%zu,\"queries\":%zu,\"build_ms\":%.1f,\"queries_per_s\":%.0f,"
         "\"hits\":%llu,\"candidates_per_query\":%.2f,\"table_bytes_per_fp\":%.2f,\"rss_delta_bytes_per_fp\":%.2f,\"passes\":%d}\n",
         n, q, build_ms, med, (unsigned long long)hits, (double)candidates / q, 32.0,
         (double)(ru1.ru_maxrss - ru0.ru_maxrss) * 1024.0 / n, passes);
  return 0;
}
