// How far the HTML scan is from a bare loop over the same pages: the page's copy into a typed array
// alone, a loop that only drops tags (quoted values found with indexOf, as the scanner finds them),
// and HtmlTextExtractor in 'keep' and 'remove' mode. CPU time per page, the best of 5 rounds after
// warm-up, so what the scanner's rules cost above the floor of any JS scan of these pages shows.
// Also prints what the pages are made of: bytes, bytes inside tags, tags, quoted attribute values.
//
// Usage: node bench/fingerprint/scan-floor.mjs [set]   (text10k by default; page-set.mjs)
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { pageSets } from './page-set.mjs';

const set = process.argv[2] ?? 'text10k';
const pages = pageSets()[set];
const source = new TextBuffer();
const out = new Uint16Array(1 << 20);

/** Drops every '<...>' (a '"' inside a tag hides '>' up to the next '"'), keeping the rest. */
function bareTagSkip(html) {
  source.setString(html);
  const u = source.units;
  const n = html.length;
  let len = 0;
  let i = 0;
  while (i < n) {
    const c = u[i];
    if (c !== 0x3c) {
      if (len < out.length) out[len++] = c;
      i++;
      continue;
    }
    for (i++; i < n; ) {
      const d = u[i];
      if (d === 0x3e) {
        i++;
        break;
      }
      if (d === 0x22) {
        const e = html.indexOf('"', i + 1);
        i = e === -1 ? n : e + 1;
        continue;
      }
      i++;
    }
    if (len < out.length) out[len++] = 0x20;
  }
  return len;
}

const text = new TextBuffer();
const keep = new HtmlTextExtractor('keep');
const remove = new HtmlTextExtractor('remove');
const variants = {
  copy: (h) => source.setString(h),
  bareTagSkip,
  extractKeep: (h) => keep.extract(h, text),
  extractRemove: (h) => remove.extract(h, text),
};
const result = {};
for (const [name, f] of Object.entries(variants)) {
  for (let w = 0; w < 3; w++) for (const p of pages) f(p.html);
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = process.cpuUsage();
    for (let k = 0; k < 4; k++) for (const p of pages) f(p.html);
    const used = process.cpuUsage(t);
    best = Math.min(best, (used.user + used.system) / (4 * pages.length));
  }
  result[name] = Math.round(best * 10) / 10;
}
let bytes = 0;
let tagBytes = 0;
let tags = 0;
let quoted = 0;
let quotedBytes = 0;
for (const { html } of pages) {
  bytes += html.length;
  for (const m of html.matchAll(/<[^>]*>/g)) {
    tagBytes += m[0].length;
    tags++;
  }
  for (const m of html.matchAll(/="[^"]*"/g)) {
    quoted++;
    quotedBytes += m[0].length;
  }
}
const per = (x) => Math.round(x / pages.length);
console.log(JSON.stringify({ set, pages: pages.length, usPerPage: result, perPage: { chars: per(bytes), inTags: per(tagBytes), tags: per(tags), quotedValues: per(quoted), quotedValueChars: per(quotedBytes) } }));
