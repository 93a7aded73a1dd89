import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

test('src/index is pure: no I/O, metrics, environment or BigInt in its modules', () => {
  const dir = join(process.cwd(), 'src/index');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 5);
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
    for (const spec of imports) {
      assert.ok(spec.startsWith('./') || spec === '../errors.js' || spec === '../fingerprint/fingerprint-hex.js', `${f} imports ${spec}`);
    }
    assert.ok(!/process\.env|BigInt\(|\b\d+n\b/.test(text), `${f} touches process.env or BigInt`);
  }
});
