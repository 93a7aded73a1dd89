/**
 * The dashboard and the rules against a real Prometheus (2.42, Debian) scraping
 * the real process: `dedup run` as a child process on the port Prometheus
 * scrapes, demo pages and bad records through Kafka, then every dashboard
 * query, template variable, recording rule and alert expression evaluated
 * through /api/v1/query. Each must parse; each dashboard query and recording
 * rule must return data, except the few listed in ALLOWED_EMPTY with a reason.
 * Finally SIGTERM must stop the process with exit code 0 within the grace
 * period, leaving a snapshot.
 *
 * Needs KAFKA_BROKERS, PROMETHEUS_URL and METRICS_PORT (scripts/test.sh starts
 * deploy/local/up.sh with WITH_PROMETHEUS=1 and our rules). Without them the
 * test fails: it never skips.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { podSizing } from '../../scripts/gen-operations-doc.js';
import { deleteTopics, metricSum, scrapeMetrics, testKafka, uniqueName, waitFor, type Infra, runTopics } from '../support/infra.js';
import { CLI, startPipelineProcess } from '../support/pipeline-process.js';
import { dashboardQueries, emptyInSingleMode, loadDashboard, loadRules, substituteGrafanaVariables } from '../unit/deploy/observability-artifacts.js';

const DEMO_PAGES = 300;
/** The shutdown path (finish batch, commit, snapshot) must fit in this; the manifests allow more. */
const SHUTDOWN_GRACE_MS = 60_000;

/**
 * Queries that may return nothing on a healthy run, each with the reason. Everything
 * else must return at least one series.
 */
const ALLOWED_EMPTY: Record<string, string> = {
  "annotation 'Restarts'": 'marks restarts within the last 2 minutes; a healthy run has none',
  // Per page, so divided by a metric single mode exports too: emptyInSingleMode cannot tell.
  "panel 'Routed coordination per page' A": 'routed mode only (dedup_routed_bytes_total); this run is single mode',
  "panel 'Routed coordination per page' B": 'routed mode only (dedup_routed_records_total); this run is single mode',
};

function missingEnv(): string[] {
  return ['KAFKA_BROKERS', 'PROMETHEUS_URL', 'METRICS_PORT'].filter((name) => !process.env[name]);
}

const missing = missingEnv();

interface QueryResult {
  status: number;
  body: { status: string; error?: string; errorType?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
}

async function promQuery(prometheusUrl: string, expr: string): Promise<QueryResult> {
  const response = await fetch(`${prometheusUrl}/api/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: expr }).toString(),
  });
  return { status: response.status, body: (await response.json()) as QueryResult['body'] };
}

async function runCli(args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | string; output: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | string>((resolve) => child.once('exit', (c, s) => resolve(c ?? s ?? 'unknown')));
  clearTimeout(timer);
  return { code, output };
}

test('every dashboard query and rule evaluates on a real Prometheus scraping the real process', { timeout: 600_000 }, async () => {
  if (missing.length > 0) {
    throw new Error(`observability test needs ${missing.join(', ')} (deploy/local/up.sh with WITH_PROMETHEUS=1 writes them to .infra/env)`);
  }
  const infra: Infra = {
    brokers: process.env.KAFKA_BROKERS!.split(','),
    registryUrl: '',
    prometheusUrl: process.env.PROMETHEUS_URL!.replace(/\/$/, ''),
    metricsPort: Number(process.env.METRICS_PORT),
  };
  const instance = `127.0.0.1:${infra.metricsPort}`;
  const run = uniqueName('obs');
  const topics = runTopics(run);
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-obs-'));
  const sizing = podSizing(100_000);
  const env: Record<string, string> = {
    ...topics,
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_INSTANCE_ID: 'obs-0',
    DEDUP_STATE_DIR: stateDir,
    DEDUP_TOPIC_PARTITIONS: '2',
    DEDUP_MAX_BATCH_RECORDS: '50',
    // A budget, so that the capacity series (limit, headroom, ratio) exist.
    DEDUP_EXPECTED_FINGERPRINTS: String(sizing.expectedFingerprints),
    DEDUP_MEMORY_BUDGET_BYTES: String(sizing.memoryBudgetBytes),
    // Snapshot after the first commits, so that the snapshot-age series exists.
    DEDUP_SNAPSHOT_INTERVAL_SECONDS: '1',
  };
  const pipeline = startPipelineProcess(env, infra.metricsPort);
  let exitCode: number | string | undefined;
  try {
    await pipeline.waitReady(120_000);

    const feed = await runCli(['demo-feed', '--count', String(DEMO_PAGES), '--bad'], env, 120_000);
    assert.equal(feed.code, 0, `demo-feed failed:\n${feed.output.slice(-4000)}`);

    // The process itself has decided every page and dead-lettered the bad records.
    const own = await waitFor(
      `the pipeline to decide ${DEMO_PAGES} pages and dead-letter the bad records`,
      async () => {
        const m = await scrapeMetrics(`${pipeline.metricsUrl}/metrics`);
        return metricSum(m, 'dedup_verdicts_total') >= DEMO_PAGES && metricSum(m, 'dedup_dead_letters_total') > 0 ? m : undefined;
      },
      120_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- pipeline output ---\n${pipeline.logs().slice(-4000)}`);
    });
    // An interval snapshot is taken after a commit once the interval has passed;
    // a fast pipeline may have committed everything inside the first interval,
    // so a few more pages after it make sure one is written.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const more = await runCli(['demo-feed', '--count', '5', '--seed', '7'], env, 120_000);
    assert.equal(more.code, 0, `demo-feed failed:\n${more.output.slice(-4000)}`);
    await waitFor('an interval snapshot', async () => (metricSum(await scrapeMetrics(`${pipeline.metricsUrl}/metrics`), 'dedup_snapshot_timestamp_seconds') > 0 ? true : undefined), 60_000, 250);
    const startTime = metricSum(own, 'process_start_time_seconds');
    const verdicts = metricSum(await scrapeMetrics(`${pipeline.metricsUrl}/metrics`), 'dedup_verdicts_total');
    assert.ok(metricSum(own, 'dedup_verdicts_total', 'verdict="duplicate"') > 0, 'the demo feed plants near-duplicates');

    // Prometheus has scraped this process (not an earlier one on the same port) after the
    // work was done. (The recording rules get the polling below.)
    const sel = `{instance="${instance}"}`;
    let seen = '';
    await waitFor(
      `Prometheus to scrape ${instance} (started ${startTime}) with ${verdicts} verdicts`,
      async () => {
        const value = async (expr: string) => (await promQuery(infra.prometheusUrl, expr)).body.data?.result[0]?.value[1];
        const start = await value(`process_start_time_seconds${sel}`);
        const sum = await value(`sum(dedup_verdicts_total${sel})`);
        seen = `start time ${start}, verdicts ${sum}`;
        return Number(start) === startTime && Number(sum) >= verdicts ? true : undefined;
      },
      90_000,
      500,
    ).catch(async (error: Error) => {
      const targets = await fetch(`${infra.prometheusUrl}/api/v1/targets`).then((r) => r.text()).catch(() => '');
      throw new Error(`${error.message}; last seen: ${seen}\ntargets: ${targets.slice(0, 2000)}`);
    });

    // Every expression: dashboard panels, annotations and variables (Grafana variables
    // substituted as for "All"), recording rules, alert expressions.
    const rules = loadRules();
    const queries = [
      ...dashboardQueries(loadDashboard()).map((q) => ({ ...q, expr: substituteGrafanaVariables(q.expr), mustHaveData: true })),
      ...rules.recording.map((r) => ({ where: `recording rule ${r.record}${r.labels?.quantile ? ` q${r.labels.quantile}` : ''}`, expr: r.expr, mustHaveData: true })),
      // Alerts are silent on a healthy run: they must parse, not return data.
      ...rules.alerting.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr, mustHaveData: false })),
    ];
    for (const where of Object.keys(ALLOWED_EMPTY)) assert.ok(queries.some((q) => q.where === where), `ALLOWED_EMPTY names an unknown query: ${where}`);

    // Parse errors are final: report them all at once, no retries.
    const rejected: string[] = [];
    for (const q of queries) {
      const r = await promQuery(infra.prometheusUrl, q.expr);
      if (r.status !== 200 || r.body.status !== 'success') rejected.push(`${q.where}: HTTP ${r.status} ${r.body.errorType}: ${r.body.error}\n    ${q.expr}`);
    }
    assert.deepEqual(rejected, [], `Prometheus 2.42 rejects:\n  ${rejected.join('\n  ')}`);

    // Data: recording rules need a few evaluations; poll until every query has some.
    let empty: string[] = [];
    await waitFor(
      'every dashboard query and recording rule to return data',
      async () => {
        empty = [];
        for (const q of queries) {
          if (!q.mustHaveData || q.where in ALLOWED_EMPTY || emptyInSingleMode(q.expr)) continue;
          const r = await promQuery(infra.prometheusUrl, q.expr);
          if ((r.body.data?.result.length ?? 0) === 0) empty.push(`${q.where}: ${q.expr}`);
        }
        return empty.length === 0 ? true : undefined;
      },
      60_000,
      1000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; still empty:\n  ${empty.join('\n  ')}`);
    });

    // Shutdown: SIGTERM, exit 0 within the grace period, a snapshot left behind.
    pipeline.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    exitCode = await Promise.race([
      pipeline.exited,
      new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), SHUTDOWN_GRACE_MS))),
    ]);
    clearTimeout(timer);
    assert.equal(exitCode, 0, `SIGTERM: expected exit 0 within ${SHUTDOWN_GRACE_MS} ms, got ${exitCode}\n${pipeline.logs().slice(-4000)}`);
    assert.ok((await readdir(stateDir)).length > 0, 'no snapshot written to DEDUP_STATE_DIR at shutdown');
  } finally {
    if (exitCode === undefined || exitCode === 'still running') {
      pipeline.child.kill('SIGKILL');
      await pipeline.exited;
    }
    await deleteTopics(testKafka(infra), Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
