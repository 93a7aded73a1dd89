/** The fingerprint core is pure: no Kafka, HTTP, metrics or environment (STYLE.md, rule 1). */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './fixtures.js';

const FORBIDDEN = [/from ['"]kafkajs/, /from ['"]@kafkajs\//, /from ['"]prom-client/, /from ['"](node:)?https?['"]/, /from ['"](node:)?net['"]/, /process\.env/, /BigInt\(/];
const ALLOWED_IMPORTS = /^(\.\.?\/|node:|@node-rs\/jieba)/;

describe('src/fingerprint boundaries', () => {
  const dir = join(repoRoot(), 'src', 'fingerprint');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    it(file, () => {
      const src = readFileSync(join(dir, file), 'utf8');
      for (const re of FORBIDDEN) {
        if (re.source === 'BigInt\\(' && file === 'fingerprint-hex.ts') continue;
        assert.doesNotMatch(src, re, `${file} must not use ${re}`);
      }
      for (const m of src.matchAll(/^(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/gm)) {
        const spec = (m[1] ?? m[2])!;
        assert.match(spec, ALLOWED_IMPORTS, `${file} imports ${spec}`);
        if (spec.startsWith('..')) assert.equal(spec, '../errors.js', `${file} reaches outside src/fingerprint: ${spec}`);
      }
    });
  }
});
