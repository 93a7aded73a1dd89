/** Deterministic PRNG for seeded random tests: the product's one mulberry32 (src/mulberry32.ts). */
export { mulberry32, mulberry32Uint32 } from '../../src/mulberry32.js';
