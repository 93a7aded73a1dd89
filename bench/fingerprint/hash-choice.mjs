// Why the feature hash is inline Murmur3 lanes and not xxhash-wasm: hash every word token of the
// text10k pages (i) inline while scanning, (ii) with two xxhash-wasm h32Raw calls per token on the
// token's UTF-16 bytes. Prints ns/token (median of 5).
import { fmix, mix, TOKEN_SEED_A, TOKEN_SEED_B } from '../../dist/src/fingerprint/feature-hash.js';
import { pageSets } from './page-set.mjs';
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
// xxhash-wasm is a bench-only peer (not a runtime dependency): installed by run.sh into bench/.peers/fp.
const { default: xxhash } = await import(new URL('../.peers/fp/node_modules/xxhash-wasm/esm/xxhash-wasm.js', import.meta.url));
const { h32Raw } = await xxhash();
const ex = new HtmlTextExtractor('remove');
const tokens = [];
for (const p of pageSets().text10k) {
  const b = new TextBuffer();
  ex.extract(p.html, b);
  for (const m of b.toString().matchAll(/[\p{L}\p{N}]+/gu)) tokens.push(new Uint16Array([...m[0]].map((c) => c.charCodeAt(0))));
}
const bytes = tokens.map((t) => new Uint8Array(t.buffer));
const med = (f) => { const xs = []; for (let r = 0; r < 7; r++) { const t = performance.now(); f(); xs.push(((performance.now() - t) * 1e6) / tokens.length); } return xs.sort((a, b) => a - b)[3].toFixed(1); };
let sink = 0;
const inline = med(() => { for (const t of tokens) { let a = TOKEN_SEED_A, b = TOKEN_SEED_B; for (let i = 0; i < t.length; i++) { a = mix(a, t[i]); b = mix(b, t[i]); } sink ^= fmix(a ^ t.length) ^ fmix(b ^ t.length); } });
const wasm = med(() => { for (const u of bytes) sink ^= h32Raw(u, 1) ^ h32Raw(u, 2); });
console.log(JSON.stringify({ tokens: tokens.length, nsPerToken: { inlineMurmurLanes: Number(inline), xxhashWasmTwoH32Raw: Number(wasm) }, sink: sink & 1 }));
