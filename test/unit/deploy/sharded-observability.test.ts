/**
 * The observability of sharded mode and of failing snapshots (issues 8, 10):
 * every metric the process registers is on the dashboard and in the operations
 * doc (checked against the registry itself, not a list kept by hand), the
 * Sharding row shows each sharded metric, the layout does not overlap, every
 * dashboard query parses in Prometheus, and no alert fires for an idle healthy
 * process of either mode, whose series are generated from the registry.
 *
 * promtool checks are skipped only when promtool is not installed, as in
 * deploy-artifacts.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promtool } from './check-tools.js';
import { Histogram, Registry } from 'prom-client';
import { stringify } from 'yaml';
import { createMetrics, type MetricsState } from '../../../src/metrics/metrics.js';
import {
  allPanels,
  dashboardQueries,
  emptyInSingleMode,
  loadDashboard,
  loadRules,
  metricNamesIn,
  REPO_ROOT,
  RULES_FILE,
  SHARDED_ONLY_METRICS,
  substituteGrafanaVariables,
  type DashboardPanel,
} from './observability-artifacts.js';

/** What issue 10 asks the dashboard to show for sharded mode. */
const SHARDED_METRICS = [
  'dedup_shards_held',
  'dedup_shard_fingerprints',
  'dedup_shard_restore_seconds',
  'dedup_rebalances_total',
  'dedup_rebalance_seconds',
  'dedup_sequence_records_applied_total',
  'dedup_sequence_lag_records',
  'dedup_answer_wait_seconds',
] as const;

const tool = promtool();
/** A missing promtool fails the checks that need it, saying how to install it. */
function requirePromtool(): void {
  if ('missing' in tool) assert.fail(tool.missing);
}

function promtoolRun(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function withTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-obs-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const dashboard = loadDashboard();
const rules = loadRules();
const docs = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');

/** Every dedup_* metric createMetrics registers, with the series names it yields. */
function registeredMetrics(): { name: string; series: string[] }[] {
  const registry = new Registry();
  createMetrics(registry, idleState(true), { defaultMetrics: false });
  return registry.getMetricsAsArray().map((metric) => {
    const name = (metric as unknown as { name: string }).name;
    const series = (metric as unknown) instanceof Histogram ? ['_bucket', '_sum', '_count'].map((s) => name + s) : [name];
    return { name, series };
  });
}

/** Metric names a set of expressions reaches, through recording rules too. */
function reachedNames(exprs: readonly string[]): Set<string> {
  const reached = new Set(exprs.flatMap(metricNamesIn));
  for (const rule of rules.recording) if (reached.has(rule.record)) for (const n of metricNamesIn(rule.expr)) reached.add(n);
  return reached;
}

function idleState(ready: boolean, shards: [number, number][] = []): MetricsState {
  return {
    indexFingerprints: () => shards.reduce((sum, [, size]) => sum + size, 0),
    indexBytes: () => 0,
    indexMemoryLimitBytes: () => 0,
    indexTables: () => 10,
    planCandidatesPerProbe: () => 1,
    ready: () => ready,
    shardSizes: () => shards,
  };
}

describe('sharded-mode metrics on the dashboard and in the docs', () => {
  const metrics = registeredMetrics();

  test('the registry declares every sharded metric the dashboard is built for', () => {
    const names = new Set(metrics.map((m) => m.name));
    for (const name of SHARDED_METRICS) assert.ok(names.has(name), `${name} is not registered by createMetrics`);
  });

  test('every registered dedup_* metric is on the dashboard (directly or through a recording rule)', () => {
    const reached = reachedNames(dashboardQueries(dashboard).map((q) => q.expr));
    for (const { name, series } of metrics) assert.ok(series.some((s) => reached.has(s)), `${name} is registered but no dashboard panel shows it`);
  });

  test('every registered dedup_* metric is named in docs/operations.md', () => {
    for (const { name } of metrics) assert.ok(docs.includes(`\`${name}\``), `docs/operations.md does not name ${name}`);
  });

  test('the Sharding row shows every sharded metric', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').sort((a, b) => a.gridPos.y - b.gridPos.y);
    const i = rows.findIndex((r) => r.title === 'Sharding');
    assert.ok(i >= 0, 'no Sharding row');
    const top = rows[i]!.gridPos.y;
    const bottom = rows[i + 1]?.gridPos.y ?? Infinity;
    const inRow = allPanels(dashboard).filter((p) => p.gridPos.y > top && p.gridPos.y < bottom);
    const reached = reachedNames(inRow.flatMap((p) => (p.targets ?? []).map((t) => t.expr)));
    for (const name of SHARDED_METRICS) {
      assert.ok([name, `${name}_bucket`, `${name}_count`].some((s) => reached.has(s)), `the Sharding row does not show ${name}`);
    }
  });

  test('a single-mode process exports the sharded metrics (at 0) except the sharded-only ones', async () => {
    const registry = new Registry();
    createMetrics(registry, idleState(true), { defaultMetrics: false });
    const exported = new Set((await registry.metrics()).split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]));
    for (const { name, series } of metrics.filter((m) => (SHARDED_METRICS as readonly string[]).includes(m.name))) {
      if (SHARDED_ONLY_METRICS.has(name)) assert.ok(!series.some((s) => exported.has(s)), `${name} is listed as sharded-only but single mode exports it`);
      else assert.ok(series.every((s) => exported.has(s)), `${name} is absent in single mode but not listed in SHARDED_ONLY_METRICS`);
    }
  });

  test('only the Sharding row has queries that are empty in single mode', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').sort((a, b) => a.gridPos.y - b.gridPos.y);
    const i = rows.findIndex((r) => r.title === 'Sharding');
    const [top, bottom] = [rows[i]!.gridPos.y, rows[i + 1]?.gridPos.y ?? Infinity];
    const emptyOnes = allPanels(dashboard).filter((p) => (p.targets ?? []).some((t) => emptyInSingleMode(t.expr)));
    assert.ok(emptyOnes.length > 0, 'the shard sizes should be on the dashboard');
    for (const p of emptyOnes) assert.ok(p.gridPos.y > top && p.gridPos.y < bottom, `'${p.title}' is empty in single mode but outside the Sharding row`);
    for (const q of dashboardQueries(dashboard).filter((x) => x.kind !== 'panel')) assert.ok(!emptyInSingleMode(q.expr), `${q.where} is empty in single mode`);
  });

  test('the snapshot failures counter is on the dashboard and has an alert', () => {
    assert.ok(reachedNames(dashboardQueries(dashboard).map((q) => q.expr)).has('dedup_snapshot_failures_total'));
    assert.ok(rules.alerting.some((r) => metricNamesIn(r.expr).includes('dedup_snapshot_failures_total')), 'no alert on dedup_snapshot_failures_total');
  });
});

describe('dashboard layout and queries', () => {
  const everything: DashboardPanel[] = [...dashboard.panels.filter((p) => p.type === 'row'), ...allPanels(dashboard)];

  test('no two panels overlap; rows span the width', () => {
    for (const row of everything.filter((p) => p.type === 'row')) assert.deepEqual([row.gridPos.x, row.gridPos.w, row.gridPos.h], [0, 24, 1], `row '${row.title}'`);
    for (let i = 0; i < everything.length; i++) {
      for (let j = i + 1; j < everything.length; j++) {
        const a = everything[i]!.gridPos;
        const b = everything[j]!.gridPos;
        const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
        assert.ok(apart, `'${everything[i]!.title}' overlaps '${everything[j]!.title}'`);
      }
    }
  });

  test('every dashboard query parses (promtool check rules on the queries as recording rules)', () => {
    requirePromtool();
    const queries = dashboardQueries(dashboard);
    const file = {
      groups: [{ name: 'dashboard', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: substituteGrafanaVariables(q.expr) })) }],
    };
    withTempDir((dir) => {
      const path = join(dir, 'dashboard.rules.yml');
      writeFileSync(path, stringify(file));
      const r = promtoolRun(['check', 'rules', path]);
      assert.equal(r.status, 0, `${r.output}\n${queries.map((q, i) => `query_${i}: ${q.where}`).join('\n')}`);
      assert.match(r.output, new RegExp(`SUCCESS: ${queries.length} rules found`));
    });
  });
});

/**
 * An idle, healthy process as Prometheus would scrape it: every series the real
 * registry exposes (defaults included), constant for three hours, plus `up`.
 */
async function idleSeries(job: string, instance: string, state: MetricsState, set: (metrics: ReturnType<typeof createMetrics>) => void = () => {}): Promise<{ series: string; values: string }[]> {
  const registry = new Registry();
  set(createMetrics(registry, state));
  const out = [{ series: `up{job="${job}",instance="${instance}"}`, values: '1x180' }];
  for (const line of (await registry.metrics()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsed exposition line: ${line}`);
    // promtool's series notation has no NaN (event-loop lag before its first sample); no alert reads those.
    if (/^nan$/i.test(m[3]!)) continue;
    const labels = [m[2], `job="${job}"`, `instance="${instance}"`].filter(Boolean).join(',');
    out.push({ series: `${m[1]}{${labels}}`, values: `${m[3]}x180` });
  }
  return out;
}

describe('alerts stay silent for an idle healthy process', () => {
  test('single mode and sharded mode (series generated from the registry)', async () => {
    requirePromtool();
    const single = await idleSeries('dedup', 'single-0', idleState(true));
    const shardSizes: [number, number][][] = [
      [
        [0, 20_000],
        [2, 20_100],
      ],
      [
        [1, 19_900],
        [3, 20_050],
      ],
    ];
    const sharded = (
      await Promise.all(
        shardSizes.map((shards, i) =>
          idleSeries('dedup-sharded', `sharded-${i}`, idleState(true, shards), (m) => {
            m.shardsHeld.set(shards.length);
            m.rebalances.inc();
          }),
        ),
      )
    ).flat();
    const evalTimes = ['10m', '1h', '2h50m'];
    const file = {
      rule_files: [RULES_FILE],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [...single, ...sharded],
          alert_rule_test: rules.alerting.flatMap((r) => evalTimes.map((t) => ({ eval_time: t, alertname: r.alert, exp_alerts: [] }))),
        },
      ],
    };
    withTempDir((dir) => {
      const path = join(dir, 'idle.test.yml');
      writeFileSync(path, stringify(file));
      const r = promtoolRun(['test', 'rules', path]);
      assert.equal(r.status, 0, r.output.slice(0, 8000));
    });
  });
});

describe('runbooks', () => {
  test('every alert section says what it means, what it costs and what to do', () => {
    for (const { alert } of rules.alerting) {
      const start = docs.indexOf(`\n### ${alert}\n`);
      assert.ok(start >= 0, `no section ### ${alert}`);
      const next = docs.slice(start + 1).search(/\n#{2,3} /);
      const section = next < 0 ? docs.slice(start) : docs.slice(start, start + 1 + next);
      for (const part of ['**Meaning:**', '**Impact:**', '**Do:**']) assert.ok(section.includes(part), `${alert}: the runbook has no ${part}`);
    }
  });
});
