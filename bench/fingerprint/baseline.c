/*
 * A tight C baseline for "how far from C are we": the same extracted texts,
 * ASCII case folding, tokens = runs of [A-Za-z0-9] or bytes >= 0x80, a 64-bit
 * xxh3-style token hash (multiply-xorshift over 8-byte words), 3-token
 * shingles combined by multiply-mix, 64 counters via per-byte histograms
 * (the same trick as simhash.ts), sign bits. No HTML
 * parsing, no stop words, no number normalisation, no feature dedup, no CJK
 * segmentation: the floor, not a peer.
 *
 * build: gcc -O3 -march=native -o baseline baseline.c
 * usage: baseline <texts.bin> <runs>   (texts.bin: u32 count, then per page u32 length + UTF-8 bytes)
 * prints JSON {pages, runs: [seconds...]} after one warm-up pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t mix64(uint64_t h) {
  h ^= h >> 37;
  h *= 0x165667919E3779F9ULL;
  h ^= h >> 32;
  return h;
}

static inline uint64_t hash_token(const uint8_t *p, size_t n) {
  uint64_t h = 0x9E3779B185EBCA87ULL ^ (n * 0xC2B2AE3D27D4EB4FULL);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    w |= 0x2020202020202020ULL & (((w & 0x4040404040404040ULL) >> 1)); /* ASCII letters -> lower */
    h = mix64(h ^ (w * 0xC2B2AE3D27D4EB4FULL));
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    if (c >= 'A' && c <= 'Z') c += 32;
    w |= (uint64_t)c << (8 * i);
  }
  return mix64(h ^ (w * 0x27D4EB2F165667C5ULL));
}

static inline int is_word(uint8_t c) {
  return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c >= 0x80;
}

static uint64_t simhash(const uint8_t *s, size_t n) {
  /* Per-byte histograms, as src/fingerprint/simhash.ts does for >= 128 features:
     8 adds per shingle, then 8 x 256 x 8 to turn them into 64 bit counts. */
  static int32_t hist[8][256];
  memset(hist, 0, sizeof hist);
  uint64_t w0 = 0, w1 = 0;
  size_t count = 0, shingles = 0;
  size_t i = 0;
  while (i < n) {
    while (i < n && !is_word(s[i])) i++;
    size_t start = i;
    while (i < n && is_word(s[i])) i++;
    if (i == start) break;
    uint64_t t = hash_token(s + start, i - start);
    count++;
    if (count >= 3) {
      uint64_t f = mix64(mix64(mix64(w0) ^ w1) ^ t);
      for (int k = 0; k < 8; k++) hist[k][(f >> (8 * k)) & 0xff]++;
      shingles++;
    }
    w0 = w1;
    w1 = t;
  }
  int32_t ones[64] = {0};
  for (int k = 0; k < 8; k++)
    for (int v = 1; v < 256; v++)
      if (hist[k][v])
        for (int b = 0; b < 8; b++) ones[8 * k + b] += ((v >> b) & 1) * hist[k][v];
  uint64_t out = 0;
  for (int b = 0; b < 64; b++) if (2 * (int64_t)ones[b] > (int64_t)shingles) out |= 1ULL << b;
  return out;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 1;
  uint32_t count;
  if (fread(&count, 4, 1, f) != 1) return 1;
  uint8_t **texts = malloc(count * sizeof *texts);
  uint32_t *lens = malloc(count * sizeof *lens);
  for (uint32_t k = 0; k < count; k++) {
    if (fread(&lens[k], 4, 1, f) != 1) return 1;
    texts[k] = malloc(lens[k] + 1);
    if (fread(texts[k], 1, lens[k], f) != lens[k]) return 1;
  }
  fclose(f);
  int runs = atoi(argv[2]);
  uint64_t sink = 0;
  for (uint32_t k = 0; k < count; k++) sink ^= simhash(texts[k], lens[k]);
  printf("{\"pages\":%u,\"runs\":[", count);
  for (int r = 0; r < runs; r++) {
    double t = now();
    for (int rep = 0; rep < 20; rep++)
      for (uint32_t k = 0; k < count; k++) sink ^= simhash(texts[k], lens[k]);
    printf("%s%.6f", r ? "," : "", (now() - t) / 20);
  }
  printf("],\"sink\":%llu}\n", (unsigned long long)(sink & 1));
  return 0;
}
