/**
 * Starting while the schema registry hangs: the instance must not exit (under
 * Kubernetes that is a crash loop). It stays up and unready, retries with a
 * growing pause, says so in its log and in dedup_registry_available, and
 * starts once the registry answers.
 *
 * The registry address is a proxy this test controls: first it accepts
 * connections and never answers (what a frozen registry does), then it
 * forwards to the real registry of the test stack.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPages } from '../../src/producers/demo-pages.js';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics } from '../support/infra.js';
import { startPipelineProcess } from '../support/pipeline-process.js';

/** An HTTP server that hangs every request until `forward()`, then proxies to `target`. */
async function hangingProxy(target: URL) {
  let forwarding = false;
  const hung: ServerResponse[] = [];
  let requests = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (!forwarding) {
      hung.push(res);
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    forward() {
      forwarding = true;
      for (const res of hung.splice(0)) res.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung.splice(0)) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('a registry that hangs at start-up: the instance stays up and unready, retries, and starts once it answers', { timeout: 300_000 }, async () => {
  const infra = requireInfra();
  const registry = new URL(infra.registryUrl);
  const proxy = await hangingProxy(registry);
  const run = uniqueName('reghang-start');
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-reghang-start-'));
  const p = startPipelineProcess(
    {
      ...topics,
      DEDUP_BROKERS: infra.brokers.join(','),
      DEDUP_GROUP_ID: `${run}-group`,
      DEDUP_INSTANCE_ID: 'dedup-0',
      DEDUP_STATE_DIR: stateDir,
      DEDUP_EXPECTED_FINGERPRINTS: '100000',
      DEDUP_FINGERPRINT_THREADS: '1',
      DEDUP_SCHEMA_REGISTRY_URL: `http://127.0.0.1:${proxy.port}${registry.pathname}`,
      DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '1000',
    },
    await freePort(),
  );
  try {
    // Up (healthz 200) and unready, with the outage in the metric, for well past the old 5 s exit.
    await waitFor('the metrics server', async () => ((await fetch(`${p.metricsUrl}/healthz`).then((r) => r.status, () => 0)) === 200 ? true : undefined), 120_000, 200);
    const since = Date.now();
    const state = await waitFor('three failed start-up attempts', async () => (p.child.exitCode !== null ? `exited ${p.child.exitCode}` : proxy.requests() >= 3 ? 'retrying' : undefined), 60_000, 200);
    assert.equal(state, 'retrying', p.logs().slice(-2000));
    while (Date.now() - since < 12_000) {
      assert.equal(p.child.exitCode, null, `the instance exited while the registry hung:\n${p.logs().slice(-2000)}`);
      assert.equal(await fetch(`${p.metricsUrl}/healthz`).then((r) => r.status), 200);
      assert.equal(await fetch(`${p.metricsUrl}/readyz`).then((r) => r.status), 503);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const m = await scrapeMetrics(`${p.metricsUrl}/metrics`);
    assert.equal(metricSum(m, 'dedup_registry_available'), 0, 'the outage shows in dedup_registry_available');
    assert.ok(metricSum(m, 'dedup_errors_total', 'REGISTRY') >= 3, 'each failed attempt is counted');
    const attempts = p.logs().match(/"msg":"schema registry unavailable at start-up: not ready, retrying"[^\n]*"attempt":\d+/g) ?? [];
    assert.ok(attempts.length >= 3, `each failed attempt is logged (${attempts.length})`);

    // The registry answers: the instance starts, decides pages, and says the registry is back.
    proxy.forward();
    await p.waitReady(180_000);
    assert.equal(metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_registry_available'), 1);
    const page = demoPages({ seed: 47 }).next().value!;
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: [{ key: page.id, value: JSON.stringify({ id: page.id, url: page.url, fetchedAt: page.fetchedAt, html: page.html }) }] });
    await producer.disconnect();
    const out = await readCommitted(infra, [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC], (r) => r.length >= 1, { timeoutMs: 120_000, settleMs: 500 });
    assert.deepEqual(out.map((r) => [r.key, r.topic]), [[page.id, topics.DEDUP_NOVEL_TOPIC]]);
  } finally {
    p.child.kill('SIGKILL');
    await proxy.close();
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
