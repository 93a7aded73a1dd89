/**
 * The codec against a real HTTP schema registry on loopback that this test
 * controls: one that keeps its subjects at FULL compatibility, one that
 * hangs, one that answers 500, one that wants basic auth.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfig, redactConfig } from '../../../src/config.js';
import { createRecordCodecFromConfig, readSchema, type RecordCodec } from '../../../src/wire/record-codec.js';
import { redactUrl } from '../../../src/wire/registry.js';

type Mode = 'ok' | 'hang' | 'fail500';

interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

/** A Confluent-compatible registry in miniature: subjects, versions, ids, per-subject config. */
async function startRegistry(options: { compatibility?: string; credentials?: { username: string; password: string }; tls?: { key: string; cert: string } } = {}) {
  const seen: SeenRequest[] = [];
  const schemas: string[] = [];
  const subjects = new Map<string, number[]>();
  let mode: Mode = 'ok';
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = decodeURIComponent((req.url ?? '').split('?')[0]!);
      seen.push({ method: req.method!, path, authorization: req.headers.authorization });
      if (mode === 'hang') return; // accepted, never answered: a stopped process looks like this
      if (mode === 'fail500') return send(res, 500, { error_code: 50001, message: 'store unavailable' });
      if (options.credentials) {
        const expected = `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString('base64')}`;
        if (req.headers.authorization !== expected) return send(res, 401, { error_code: 401, message: 'Unauthorized' });
      }
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : null;
      let m: RegExpMatchArray | null;
      if ((m = path.match(/^\/config\/(.+)$/))) {
        if (req.method === 'GET') return send(res, 200, { compatibilityLevel: options.compatibility ?? 'BACKWARD' });
        return send(res, 200, body);
      }
      if ((m = path.match(/^\/subjects\/(.+)\/versions$/)) && req.method === 'POST') {
        let id = schemas.indexOf(body.schema) + 1;
        if (id === 0) id = schemas.push(body.schema);
        const versions = subjects.get(m[1]!) ?? [];
        if (!versions.includes(id)) versions.push(id);
        subjects.set(m[1]!, versions);
        return send(res, 200, { id });
      }
      if ((m = path.match(/^\/schemas\/ids\/(\d+)$/))) {
        const schema = schemas[Number(m[1]) - 1];
        return schema === undefined ? send(res, 404, { error_code: 40403, message: 'Schema not found' }) : send(res, 200, { schema });
      }
      return send(res, 404, { error_code: 40401, message: 'Subject not found' });
    });
  };
  const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    seen,
    subjects,
    setMode(next: Mode) {
      mode = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function codecFor(env: Record<string, string>): Promise<RecordCodec> {
  return createRecordCodecFromConfig(loadConfig(env));
}

/** An Avro record header naming `schemaId`; the body does not matter until the schema is fetched. */
function avroRecord(schemaId: number): Buffer {
  const value = Buffer.alloc(8);
  value.writeUInt8(0, 0);
  value.writeInt32BE(schemaId, 1);
  return value;
}

test('start-up registers only the subjects the pipeline writes, whatever their compatibility level', { timeout: 20_000 }, async () => {
  for (const compatibility of ['FULL', 'NONE', 'FORWARD_TRANSITIVE', 'BACKWARD']) {
    const registry = await startRegistry({ compatibility });
    try {
      const codec = await codecFor({ DEDUP_SCHEMA_REGISTRY_URL: registry.url });
      assert.equal(codec.format, 'avro');
      assert.deepEqual([...registry.subjects.keys()].sort(), ['pages.duplicate-value', 'pages.novel-value', 'simhash.fingerprints-value'], compatibility);
      const touched = registry.seen.filter((r) => r.path.includes('crawl.pages') || r.method === 'PUT');
      assert.deepEqual(touched, [], `${compatibility}: the crawler's subject and every subject's config are left alone`);
      // Output records encode with the registered ids, read back through the registry.
      const change = { id: 'a', hi: 1, lo: 2, short: false, duplicateOf: null, distance: 0, fetchedAt: 3, sequence: 4 };
      assert.deepEqual(await codec.decodeChange(await codec.encodeChange(change)), change);
      // A producer of pages (the demo crawler) registers the page schema on its first page.
      const page = { id: 'p', url: 'https://e.example/', fetchedAt: 1_700_000_000_005, html: '<p>x</p>', text: null };
      assert.deepEqual(await codec.decodePage(await codec.encodePage(page), 0), page);
      assert.deepEqual(registry.subjects.get('crawl.pages-value')?.length, 1);
    } finally {
      await registry.close();
    }
  }
});

test('a registry that accepts connections and never answers: every call fails retriably within the deadline', { timeout: 20_000 }, async () => {
  const registry = await startRegistry();
  try {
    const env = { DEDUP_SCHEMA_REGISTRY_URL: registry.url, DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '300' };
    const codec = await codecFor(env);
    const healthy = codec.registryHealth();
    assert.equal(healthy.consecutiveFailures, 0);
    assert.ok(healthy.lastSuccessAt > 0, 'start-up talked to the registry');

    registry.setMode('hang');
    for (let attempt = 1; attempt <= 3; attempt++) {
      const started = Date.now();
      await assert.rejects(codec.decodePage(avroRecord(4242), 0), { code: 'REGISTRY', retriable: true });
      assert.ok(Date.now() - started < 3000, `attempt ${attempt} gave up in ${Date.now() - started} ms`);
      assert.equal(codec.registryHealth().consecutiveFailures, attempt);
    }
    assert.equal(codec.registryHealth().lastSuccessAt, healthy.lastSuccessAt);
    // Start-up against a hung registry fails (retriably) rather than hanging.
    await assert.rejects(codecFor(env), { code: 'REGISTRY', retriable: true });

    registry.setMode('ok');
    const page = { id: 'p', url: '', fetchedAt: 1_700_000_000_005, html: null, text: 'back again' };
    assert.deepEqual(await codec.decodePage(await codec.encodePage(page), 0), page);
    assert.equal(codec.registryHealth().consecutiveFailures, 0, 'one answer resets the count');
  } finally {
    await registry.close();
  }
});

test('a registry answering 500: retriable REGISTRY errors counted as failures; a 404 is an answer and a dead letter', { timeout: 20_000 }, async () => {
  const registry = await startRegistry();
  try {
    const codec = await codecFor({ DEDUP_SCHEMA_REGISTRY_URL: registry.url, DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '2000' });
    registry.setMode('fail500');
    await assert.rejects(codec.decodePage(avroRecord(7), 0), { code: 'REGISTRY', retriable: true });
    await assert.rejects(
      codec.encodeNovel({ page: { id: 'n', url: '', fetchedAt: 0, html: null, text: 't' }, hi: 1, lo: 1 }),
      { code: 'REGISTRY', retriable: true },
    );
    assert.equal(codec.registryHealth().consecutiveFailures, 2);
    registry.setMode('ok');
    await assert.rejects(codec.decodePage(avroRecord(999), 0), { code: 'SCHEMA_UNKNOWN', retriable: false });
    assert.equal(codec.registryHealth().consecutiveFailures, 0);
  } finally {
    await registry.close();
  }
});

test('basic auth from the options or from the URL, never printed', { timeout: 20_000 }, async () => {
  const credentials = { username: 'dedup', password: 's3cr:et/p@ss' };
  const registry = await startRegistry({ credentials });
  try {
    const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const inUrl = `http://${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${registry.port}`;
    const envs: Record<string, string>[] = [
      { DEDUP_SCHEMA_REGISTRY_URL: registry.url, DEDUP_SCHEMA_REGISTRY_USERNAME: credentials.username, DEDUP_SCHEMA_REGISTRY_PASSWORD: credentials.password },
      { DEDUP_SCHEMA_REGISTRY_URL: inUrl },
    ];
    for (const env of envs) {
      registry.seen.length = 0;
      const codec = await codecFor(env);
      const change = { id: 'a', hi: 1, lo: 2, short: true, duplicateOf: 'b', distance: 1, fetchedAt: 3, sequence: 4 };
      assert.deepEqual(await codec.decodeChange(await codec.encodeChange(change)), change);
      assert.ok(registry.seen.length >= 4);
      for (const r of registry.seen) assert.equal(r.authorization, expected, `${r.method} ${r.path}`);
      const summary = JSON.stringify(redactConfig(loadConfig(env)));
      assert.ok(!summary.includes(encodeURIComponent(credentials.password)) && !summary.includes(credentials.password), summary);
    }

    // Wrong credentials: start-up fails, and the error does not carry the password.
    const wrong = `http://dedup:${encodeURIComponent('wrong-password')}@127.0.0.1:${registry.port}`;
    const error = await codecFor({ DEDUP_SCHEMA_REGISTRY_URL: wrong }).then(
      () => assert.fail('registered with wrong credentials'),
      (e: unknown) => e as Error & { code: string },
    );
    assert.equal(error.code, 'REGISTRY');
    assert.ok(!JSON.stringify({ message: error.message, stack: error.stack }).includes('wrong-password'), error.message);
  } finally {
    await registry.close();
  }
});

test('redactUrl hides userinfo and nothing else', () => {
  assert.equal(redactUrl('https://user:pass@registry.example:8081/apis/ccompat/v7'), 'https://***@registry.example:8081/apis/ccompat/v7');
  assert.equal(redactUrl('http://token@host'), 'http://***@host');
  assert.equal(redactUrl('http://127.0.0.1:8081'), 'http://127.0.0.1:8081');
  assert.equal(redactUrl(''), '');
  assert.equal(redactUrl('https://u:p%40ss@host/x@y'), 'https://***@host/x@y');
});

test('registry options are validated with the rest of the config', () => {
  assert.throws(() => loadConfig({ DEDUP_SCHEMA_REGISTRY_URL: 'http://r:1', DEDUP_SCHEMA_REGISTRY_CA_FILE: '/tmp/ca.pem' }), /schemaRegistryCaFile needs an https/);
  assert.throws(() => loadConfig({ DEDUP_SCHEMA_REGISTRY_URL: 'http://r:1', DEDUP_SCHEMA_REGISTRY_PASSWORD: 'x' }), /needs schemaRegistryUsername/);
  assert.throws(() => loadConfig({ DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '0' }), /must be >= 100/);
  assert.equal(loadConfig({}).schemaRegistryTimeoutMs, 5000);
  assert.ok(readSchema('crawled-page').includes('"name"'));
});

/** A self-signed certificate for 127.0.0.1 (valid until 2125), its own CA. */
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBkTCCATagAwIBAgIUVRR/1H6056GziqP8v5dwTmc3xnswCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMzA5NDQ0OFoYDzIxMjYxMDMw
MDk0NDQ4WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARjafbzM3rYC305BKgU594meYOPMZje5/xmHvpPsLsy4pHdEMvBzDUx
5BwSNzjw66HiZyyo7r8Ugd7SFRc5k69Go2QwYjAdBgNVHQ4EFgQUPei7KeIMSBTd
FXtqZe4RjgEeaRswHwYDVR0jBBgwFoAUPei7KeIMSBTdFXtqZe4RjgEeaRswDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0kAMEYC
IQCt03YyoVepcg1g+TztYGjcyMue9PJhTKP6WSi0d3xq8wIhAPmO1aoeqdKdX4Gr
fsT5UqzhOsj7BN4nChjUktdDAIjs
-----END CERTIFICATE-----`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVlUD7MCeu5/bDixR
HDQh62eoTCA/pYbEvWwLco2UjlahRANCAARjafbzM3rYC305BKgU594meYOPMZje
5/xmHvpPsLsy4pHdEMvBzDUx5BwSNzjw66HiZyyo7r8Ugd7SFRc5k69G
-----END PRIVATE KEY-----`;

test('an https registry signed by a private CA: trusted with the CA file, refused without it', { timeout: 20_000 }, async () => {
  const registry = await startRegistry({ tls: { key: TEST_KEY, cert: TEST_CERT } });
  try {
    const caFile = join(mkdtempSync(join(tmpdir(), 'registry-ca-')), 'ca.pem');
    writeFileSync(caFile, TEST_CERT);
    const codec = await codecFor({ DEDUP_SCHEMA_REGISTRY_URL: registry.url, DEDUP_SCHEMA_REGISTRY_CA_FILE: caFile });
    const change = { id: 'a', hi: 1, lo: 2, short: false, duplicateOf: null, distance: 0, fetchedAt: 3, sequence: 4 };
    assert.deepEqual(await codec.decodeChange(await codec.encodeChange(change)), change);
    await assert.rejects(codecFor({ DEDUP_SCHEMA_REGISTRY_URL: registry.url, DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '2000' }), { code: 'REGISTRY' });
  } finally {
    await registry.close();
  }
});
