/**
 * The published package works as a library: `npm pack` the repository,
 * install the tarball into an empty project (offline, from the npm cache that
 * `npm ci` filled), and import it from plain ESM and from TypeScript. A
 * `main`, `types` or `files` entry that points at nothing fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFingerprinter, fingerprintToHex } from '../../../src/fingerprint/index.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const PKG = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  main: string;
  types: string;
  files: string[];
  dependencies: Record<string, string>;
};

function sh(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' } });
  assert.equal(r.status, 0, `${command} ${args.join(' ')} in ${cwd} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const HTML = '<html><body><nav>menu</nav><p>Simhash turns a page into sixty-four bits whose Hamming distance tracks how different two pages are.</p></body></html>';

const CONSUMER_MJS = `
import { createFingerprinter, fingerprintToHex, createDecider, planFromConfig, loadConfig, DedupError } from ${JSON.stringify(PKG.name)};
const html = ${JSON.stringify(HTML)};
const fingerprinter = await createFingerprinter();
const r = fingerprinter.fingerprint({ html });
const config = loadConfig({});
const decider = createDecider(config, planFromConfig(config));
const first = decider.decide({ id: 'a', hi: r.hi, lo: r.lo, short: r.short, fetchedAt: 0 });
const copy = decider.decide({ id: 'b', hi: r.hi, lo: r.lo, short: r.short, fetchedAt: 0 });
console.log(JSON.stringify({ fingerprint: fingerprintToHex(r.hi, r.lo), first: first.verdict, copy: copy.verdict, duplicateOf: copy.duplicateOf, errorClass: typeof DedupError }));
`;

const CONSUMER_TS = `
import { createFingerprinter, fingerprintToHex, type FingerprintResult, type Verdict } from ${JSON.stringify(PKG.name)};
const fingerprinter = await createFingerprinter();
const r: FingerprintResult = fingerprinter.fingerprint({ text: 'typed' });
const hex: string = fingerprintToHex(r.hi, r.lo);
const verdict: Verdict['verdict'] = 'novel';
export { hex, verdict };
`;

/**
 * An empty project that depends on the tarball, with a lockfile taken from
 * ours: `npm ci` after ours cached the dependencies' tarballs but not the
 * registry's metadata, which `npm install <tgz>` would need to resolve
 * versions. The tarball's own dependencies are pinned to what our lockfile
 * resolved, which is what the package was tested with.
 */
function writeConsumerProject(dir: string, tarball: string): void {
  const ours = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const spec = `file:${tarball}`;
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { [PKG.name]: spec } },
    [`node_modules/${PKG.name}`]: { version: PKG.version, resolved: spec, dependencies: PKG.dependencies },
  };
  for (const [path, entry] of Object.entries(ours.packages)) if (path.startsWith('node_modules/') && !entry.dev) packages[path] = entry;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { [PKG.name]: spec } }));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }));
}

test('npm pack: main, types and every files entry are in the tarball, tests are not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-pack-'));
  try {
    const [packed] = JSON.parse(sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO_ROOT)) as [{ files: { path: string }[] }];
    const paths = new Set(packed.files.map((f) => f.path));
    assert.ok(paths.has(PKG.main), `main ${PKG.main} is not in the package (run the build?)`);
    assert.ok(paths.has(PKG.types), `types ${PKG.types} is not in the package`);
    for (const entry of PKG.files) assert.ok([...paths].some((p) => p === entry || p.startsWith(`${entry}/`)), `files lists ${entry}, which packs nothing`);
    assert.ok(![...paths].some((p) => p.startsWith('dist/test/') || p.startsWith('src/')), 'tests and sources stay out');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the packed tarball installs offline and fingerprints a page from ESM and TypeScript', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-consumer-'));
  try {
    const [packed] = JSON.parse(sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO_ROOT)) as [{ filename: string }];
    writeConsumerProject(dir, packed.filename);
    sh('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
    assert.ok(existsSync(join(dir, 'node_modules', PKG.name, PKG.main)));

    writeFileSync(join(dir, 'consumer.mjs'), CONSUMER_MJS);
    const out = JSON.parse(sh(process.execPath, ['consumer.mjs'], dir)) as Record<string, string>;
    const expected = (await createFingerprinter()).fingerprint({ html: HTML });
    assert.deepEqual(out, { fingerprint: fingerprintToHex(expected.hi, expected.lo), first: 'novel', copy: 'duplicate', duplicateOf: 'a', errorClass: 'function' });

    writeFileSync(join(dir, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], typeRoots: [join(REPO_ROOT, 'node_modules', '@types')] },
        files: ['consumer.ts'],
      }),
    );
    sh(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
