// What a fingerprinter keeps after one huge page: the typed arrays it holds (process.memoryUsage
// arrayBuffers, after a forced GC) after small pages, after a page of about 4 MB of HTML (the
// default page limit), and after small pages again. Writes bench/results/fingerprint-retained.json.
//
//   npx tsc -p tsconfig.json && node --expose-gc bench/fingerprint/retained.mjs
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createFingerprinter } = await import(join(ROOT, 'dist', 'src', 'fingerprint', 'index.js'));
const fp = await createFingerprinter();
const small = Array.from({ length: 20 }, (_, i) => `<html><body><p>page ${i}: ${'crawler fetched the article text again 中文分词 '.repeat(200)}</p></body></html>`);
const huge = `<html><body>${Array.from({ length: 66_000 }, (_, i) => `<p>段落${i} 中文分词测试 the page_${i} words ${i}.${i % 7}</p>`).join('')}</body></html>`;
// Backing stores of collected arrays are freed after the collection: collect, wait, collect again.
const mb = async () => {
  for (let k = 0; k < 3; k++) {
    global.gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Math.round((process.memoryUsage().arrayBuffers / 1e6) * 10) / 10;
};
for (const html of small) fp.fingerprint({ html });
const afterSmall = await mb();
fp.fingerprint({ html: huge });
const afterHuge = await mb();
for (const html of small) fp.fingerprint({ html });
const afterSmallAgain = await mb();
const out = {
  benchmark: 'fingerprint buffers kept after a huge page',
  date: new Date().toISOString(),
  commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(),
  node: process.version,
  hugePageBytes: Buffer.byteLength(huge),
  arrayBuffersMB: { afterSmallPages: afterSmall, afterHugePage: afterHuge, afterSmallPagesAgain: afterSmallAgain },
  note: 'process.memoryUsage().arrayBuffers after global.gc(): every typed array of the process, the jieba tables (17.6 MB) among them',
};
writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint-retained.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(out.arrayBuffersMB), out.hugePageBytes);
