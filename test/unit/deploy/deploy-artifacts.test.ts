/**
 * The deployment and observability artifacts are derived from the code and must
 * stay true to it (STYLE.md items 7, 14): the dashboard and rules use only
 * metrics the process exports, promtool accepts and unit-tests the rules, the
 * manifests carry what running this process needs and are sized by the one
 * formula, and docs/operations.md is regenerated from CONFIG_OPTIONS and the
 * metrics module.
 *
 * No check is skipped: without promtool or kustomize the checks that need them
 * fail, naming deploy/local/check-tools.sh, which installs both (npm test runs
 * it through deploy/local/up.sh).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_OPTIONS, loadConfig } from '../../../src/config.js';
import { createMetrics, METRIC_NAMES, type MetricsState } from '../../../src/metrics/metrics.js';
import { podSizing, renderOperationsDoc, SIZING } from '../../../scripts/gen-operations-doc.js';
import {
  allPanels,
  dashboardQueries,
  loadDashboard,
  loadRules,
  metricNamesIn,
  REPO_ROOT,
  RULES_FILE,
  RULE_TESTS_FILE,
  vectorSelectors,
  type AlertingRule,
} from './observability-artifacts.js';
import { kustomize, promtool } from './check-tools.js';

const STATE: MetricsState = {
  indexFingerprints: () => 0,
  indexBytes: () => 0,
  indexMemoryLimitBytes: () => 0,
  indexTables: () => 0,
  planCandidatesPerProbe: () => 0,
  ready: () => false,
};

/** Series names that may appear in our PromQL: declared, default, histogram parts, recorded, `up`. */
function knownSeriesNames(): { names: Set<string>; declared: string[] } {
  const registry = new Registry();
  createMetrics(registry, STATE);
  const names = new Set<string>();
  const declared: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    const name = (metric as unknown as { name: string }).name;
    if (name.startsWith('dedup_')) declared.push(name);
    names.add(name);
    if ((metric as unknown) instanceof Histogram) for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  for (const rule of loadRules().recording) names.add(rule.record);
  names.add('up'); // written by Prometheus for every scrape target
  return { names, declared };
}

function read(...path: string[]): string {
  return readFileSync(join(REPO_ROOT, ...path), 'utf8');
}

function yamlDocs(...path: string[]): Record<string, any>[] {
  return parseAllDocuments(read(...path)).map((d) => {
    assert.equal(d.errors.length, 0, `${path.join('/')}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS() as Record<string, any>;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const line of markdown.split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m) out.add(m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return out;
}

const PROMTOOL = promtool();
const KUSTOMIZE = kustomize();

/** The promtool command, or a failure saying how to install it. */
function needPromtool(): string {
  if ('missing' in PROMTOOL) assert.fail(PROMTOOL.missing);
  return PROMTOOL.command;
}

function run(command: string, args: string[], cwd = REPO_ROOT): { status: number | null; output: string } {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const rules = loadRules();
const dashboard = loadDashboard();
const docs = read('docs', 'operations.md');

describe('PromQL selector extraction', () => {
  test('finds metric names, not functions, keywords, labels, strings or durations', () => {
    const expr =
      'sum by (job, le) (rate(a_total{x="b}c", y=~"$job"}[5m])) / on (job) group_left () b_gauge > bool 1e5 ' +
      'unless label_replace(c_info, "dst", "$1", "src", "(.*)") offset 5m and histogram_quantile(0.9, d_bucket[$__rate_interval])';
    assert.deepEqual(metricNamesIn(expr), ['a_total', 'b_gauge', 'c_info', 'd_bucket']);
    assert.deepEqual(vectorSelectors('x{job=~"$job",instance=~"$instance"} - y'), [
      { name: 'x', matchers: 'job=~"$job",instance=~"$instance"' },
      { name: 'y', matchers: '' },
    ]);
  });
});

describe('metric names in the dashboard and rules', () => {
  const { names, declared } = knownSeriesNames();

  test('METRIC_NAMES lists exactly the dedup_* metrics createMetrics registers', () => {
    assert.deepEqual([...declared].sort(), [...METRIC_NAMES].sort());
  });

  test('every name the dashboard selects is exported or recorded by our rules', () => {
    for (const q of dashboardQueries(dashboard)) {
      const used = metricNamesIn(q.expr);
      assert.ok(used.length > 0, `${q.where}: no metric found in ${q.expr}`);
      for (const name of used) assert.ok(names.has(name), `${q.where}: unknown metric ${name} in ${q.expr}`);
    }
  });

  test('every name the rules select is exported or recorded by our rules', () => {
    for (const rule of [...rules.recording, ...rules.alerting]) {
      const where = 'record' in rule ? `recording rule ${rule.record}` : `alert ${(rule as AlertingRule).alert}`;
      const used = metricNamesIn(rule.expr);
      assert.ok(used.length > 0, `${where}: no metric found`);
      for (const name of used) assert.ok(names.has(name), `${where}: unknown metric ${name}`);
    }
  });

  test('every declared metric is on the dashboard (directly or through a recording rule)', () => {
    const onDashboard = new Set(dashboardQueries(dashboard).flatMap((q) => metricNamesIn(q.expr)));
    const reached = new Set(onDashboard);
    for (const rule of rules.recording) if (onDashboard.has(rule.record)) for (const n of metricNamesIn(rule.expr)) reached.add(n);
    for (const name of METRIC_NAMES) {
      const parts = [name, `${name}_bucket`, `${name}_sum`, `${name}_count`];
      assert.ok(parts.some((p) => reached.has(p)), `${name} is declared but no dashboard panel shows it`);
    }
  });

  test('every recording rule is used by the dashboard or an alert', () => {
    const used = new Set([...dashboardQueries(dashboard).map((q) => q.expr), ...rules.alerting.map((r) => r.expr)].flatMap(metricNamesIn));
    for (const rule of rules.recording) assert.ok(used.has(rule.record), `recording rule ${rule.record} is used nowhere`);
  });
});

describe('Prometheus rules', () => {
  test('promtool check rules', () => {
    const r = run(needPromtool(), ['check', 'rules', RULES_FILE]);
    assert.equal(r.status, 0, r.output);
  });

  test('promtool test rules (alert unit tests)', () => {
    const r = run(needPromtool(), ['test', 'rules', RULE_TESTS_FILE]);
    assert.equal(r.status, 0, r.output);
  });

  test('every alert has a firing and a silent unit test', () => {
    const doc = parse(readFileSync(RULE_TESTS_FILE, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of rules.alerting) {
      const mine = cases.filter((c) => c.alertname === alert);
      assert.ok(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${alert}: no test where it fires`);
      assert.ok(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${alert}: no test where it stays silent`);
    }
  });

  test('every alert has severity, summary, description and a runbook anchor that exists', () => {
    const docAnchors = anchors(docs);
    for (const rule of rules.alerting) {
      assert.match(rule.labels?.severity ?? '', /^(critical|warning)$/, `${rule.alert}: severity`);
      assert.ok(rule.annotations?.summary, `${rule.alert}: summary`);
      assert.ok(rule.annotations?.description, `${rule.alert}: description`);
      const m = /^docs\/operations\.md#([a-z0-9-]+)$/.exec(rule.annotations?.runbook_url ?? '');
      assert.ok(m, `${rule.alert}: runbook_url must be docs/operations.md#<anchor>, got ${rule.annotations?.runbook_url}`);
      assert.equal(m[1], rule.alert.toLowerCase(), `${rule.alert}: runbook anchor should be its own section`);
      assert.ok(docAnchors.has(m[1]!), `${rule.alert}: docs/operations.md has no section #${m[1]}`);
    }
  });

  test('promtool check config: the example and the compose configs, with our rules', () => {
    const promtoolCommand = needPromtool();
    const dir = mkdtempSync(join(tmpdir(), 'dedup-promcfg-'));
    try {
      writeFileSync(join(dir, 'targets.json'), '[]');
      // Debian's promtool is built without Kubernetes SD: check that job with a file SD in
      // its place; its relabel rules, the part we wrote, are validated as they are.
      const example = parse(read('deploy', 'prometheus', 'prometheus.example.yml')) as Record<string, any>;
      example.rule_files = [RULES_FILE];
      let replaced = 0;
      for (const job of example.scrape_configs as Record<string, any>[]) {
        if (job.kubernetes_sd_configs) {
          delete job.kubernetes_sd_configs;
          job.file_sd_configs = [{ files: [join(dir, 'targets.json')] }];
          replaced++;
        }
      }
      assert.ok(replaced > 0, 'the example should have a Kubernetes pod job');
      const compose = parse(read('deploy', 'docker', 'prometheus.yml')) as Record<string, any>;
      compose.rule_files = [join(REPO_ROOT, 'deploy', 'prometheus', '*.rules.yml')];
      for (const [name, config] of [['example', example], ['compose', compose]] as const) {
        const file = join(dir, `${name}.yml`);
        writeFileSync(file, JSON.stringify(config, null, 2)); // JSON is YAML
        const r = run(promtoolCommand, ['check', 'config', file]);
        assert.equal(r.status, 0, `${name}: ${r.output}`);
        assert.match(r.output, /SUCCESS: 1 rule files found|SUCCESS: \d+ rules found/, `${name}: rules not loaded:\n${r.output}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Grafana dashboard', () => {
  const panels = allPanels(dashboard);
  const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));

  test('has a Prometheus datasource variable and job/instance variables that use it', () => {
    const ds = variables.get('datasource');
    assert.equal(ds?.type, 'datasource');
    assert.equal(ds?.query, 'prometheus');
    for (const name of ['job', 'instance']) {
      const v = variables.get(name);
      assert.equal(v?.type, 'query', name);
      assert.equal(v?.datasource?.uid, '${datasource}', name);
      assert.equal(v?.includeAll, true, name);
      assert.equal(v?.allValue, '.+', name);
    }
    assert.ok(dashboard.uid && dashboard.title);
  });

  test('every panel and target uses ${datasource}; ids unique; layout within 24 columns', () => {
    const ids = new Set<number>();
    for (const p of [...panels, ...dashboard.panels.filter((x) => x.type === 'row')]) {
      assert.ok(!ids.has(p.id), `duplicate panel id ${p.id}`);
      ids.add(p.id);
      assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `panel '${p.title}' is outside the grid`);
    }
    for (const p of panels) {
      assert.equal(p.datasource?.uid, '${datasource}', `panel '${p.title}' datasource`);
      assert.ok((p.targets ?? []).length > 0, `panel '${p.title}' has no query`);
      const refIds = new Set<string>();
      for (const t of p.targets ?? []) {
        assert.equal(t.datasource?.uid, '${datasource}', `panel '${p.title}' ${t.refId} datasource`);
        assert.ok(!refIds.has(t.refId), `panel '${p.title}' duplicate refId ${t.refId}`);
        refIds.add(t.refId);
      }
    }
  });

  test('every selector in panels and annotations is filtered by $job and $instance', () => {
    for (const q of dashboardQueries(dashboard).filter((x) => x.kind !== 'variable')) {
      for (const s of vectorSelectors(q.expr)) {
        assert.match(s.matchers, /job=~"\$job"/, `${q.where}: ${s.name} lacks job=~"$job"`);
        assert.match(s.matchers, /instance=~"\$instance"/, `${q.where}: ${s.name} lacks instance=~"$instance"`);
      }
    }
  });

  test('rates over raw counters use $__rate_interval', () => {
    for (const q of dashboardQueries(dashboard)) {
      for (const m of q.expr.matchAll(/\b(rate|irate|increase)\([^[]*\[([^\]]+)\]/g)) {
        assert.equal(m[2], '$__rate_interval', `${q.where}: ${m[0]}`);
      }
    }
  });
});

describe('Kubernetes manifests', () => {
  const files = readdirSync(join(REPO_ROOT, 'deploy', 'k8s')).filter((f) => f.endsWith('.yaml'));
  const byKind = new Map<string, Record<string, any>>();
  for (const f of files) for (const d of yamlDocs('deploy', 'k8s', f)) byKind.set(d.kind ?? 'Kustomization', d);
  const sts = byKind.get('StatefulSet')!;
  const configMap = byKind.get('ConfigMap')!;
  const secret = byKind.get('Secret')!;
  const pod = sts?.spec?.template?.spec;
  const container = pod?.containers?.[0];
  const appLabels = sts?.spec?.selector?.matchLabels as Record<string, string>;

  test('all kinds are there and kustomization lists existing files', () => {
    for (const kind of ['StatefulSet', 'Service', 'ConfigMap', 'Secret', 'PodDisruptionBudget', 'PodMonitor', 'Kustomization']) {
      assert.ok(byKind.has(kind), `deploy/k8s has no ${kind}`);
    }
    for (const r of byKind.get('Kustomization')!.resources as string[]) assert.ok(existsSync(join(REPO_ROOT, 'deploy', 'k8s', r)), `kustomization: ${r} missing`);
  });

  test('kustomize builds them', () => {
    if ('missing' in KUSTOMIZE) assert.fail(KUSTOMIZE.missing);
    const r = run(KUSTOMIZE.command, [...KUSTOMIZE.args, join(REPO_ROOT, 'deploy', 'k8s')]);
    assert.equal(r.status, 0, r.output);
    for (const kind of ['StatefulSet', 'Service', 'ConfigMap', 'PodDisruptionBudget', 'PodMonitor']) assert.match(r.output, new RegExp(`^kind: ${kind}$`, 'm'));
  });

  test('StatefulSet: one unsharded replica, probes, grace period, state volume', () => {
    assert.equal(sts.spec.replicas, 1);
    assert.equal(sts.spec.serviceName, byKind.get('Service')!.metadata.name);
    assert.deepEqual(sts.spec.template.metadata.labels, { ...sts.spec.template.metadata.labels, ...appLabels });
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    const metricsPort = container.ports.find((p: any) => p.name === 'metrics');
    assert.equal(metricsPort?.containerPort, Number(configMap.data.DEDUP_METRICS_PORT));
    for (const probe of [container.readinessProbe, container.livenessProbe]) assert.equal(probe.httpGet.port, 'metrics');
    // Shutdown path: finish batch, commit, snapshot: up to ~60 s for a large index.
    assert.ok(pod.terminationGracePeriodSeconds >= 90, `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} < 90`);
    const claim = sts.spec.volumeClaimTemplates?.[0];
    assert.ok(claim, 'no volumeClaimTemplates');
    const mount = container.volumeMounts.find((m: any) => m.name === claim.metadata.name);
    assert.equal(mount?.mountPath, configMap.data.DEDUP_STATE_DIR, 'the claim must be mounted at DEDUP_STATE_DIR');
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const instance = container.env.find((e: any) => e.name === 'DEDUP_INSTANCE_ID');
    assert.equal(instance?.valueFrom?.fieldRef?.fieldPath, 'metadata.name', 'the transactional instance id must be the stable pod name');
  });

  test('resources, budget and volume come from the sizing formula', () => {
    const n = Number(configMap.data.DEDUP_EXPECTED_FINGERPRINTS);
    const s = podSizing(n);
    assert.equal(Number(configMap.data.DEDUP_MEMORY_BUDGET_BYTES), s.memoryBudgetBytes, 'DEDUP_MEMORY_BUDGET_BYTES');
    assert.equal(container.resources.requests.memory, `${s.podMemoryMiB}Mi`, 'memory request');
    assert.equal(container.resources.limits.memory, `${s.podMemoryMiB}Mi`, 'memory limit');
    // Worker threads: 0 means one per core of the node (not of the pod), each with its own heap.
    const threads = Number(configMap.data.DEDUP_FINGERPRINT_THREADS);
    assert.ok(Number.isInteger(threads) && threads !== 0, 'DEDUP_FINGERPRINT_THREADS must be pinned in the ConfigMap');
    assert.equal(Number(container.resources.requests.cpu), Math.max(1, threads), 'cpu request = fingerprint threads');
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, `${s.stateVolumeGiB}Gi`, 'state volume');
  });

  test('config: ConfigMap + Secret + env are a valid configuration', () => {
    const refs = container.envFrom as any[];
    assert.ok(refs.some((r) => r.configMapRef?.name === configMap.metadata.name), 'envFrom the ConfigMap');
    const secretRef = refs.find((r) => r.secretRef)?.secretRef;
    assert.equal(secretRef?.name, secret.metadata.name, 'envFrom the Secret');
    assert.equal(secretRef?.optional, true, 'the SASL Secret is optional (SASL is off by default)');
    const env: Record<string, string> = { ...configMap.data, ...secret.stringData, DEDUP_INSTANCE_ID: 'simhash-dedup-0' };
    const known = new Set(CONFIG_OPTIONS.map((o) => o.env));
    for (const name of Object.keys(env)) assert.ok(known.has(name), `${name} is not a DEDUP_* option`);
    const config = loadConfig(env);
    assert.equal(config.kafkaSsl, false, 'TLS is off by default');
    assert.equal(config.kafkaSaslMechanism, 'none', 'SASL is off by default');
  });

  test('scraping: Service port, annotations, PodMonitor, PDB select the pod', () => {
    const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => sts.spec.template.metadata.labels[k] === v);
    const service = byKind.get('Service')!;
    assert.ok(matches(service.spec.selector), 'Service selector');
    assert.ok(service.spec.ports.some((p: any) => p.name === 'metrics' && p.port === 9464));
    const annotations = sts.spec.template.metadata.annotations;
    assert.equal(annotations['prometheus.io/scrape'], 'true');
    assert.equal(annotations['prometheus.io/port'], configMap.data.DEDUP_METRICS_PORT);
    assert.equal(annotations['prometheus.io/path'], '/metrics');
    const podMonitor = byKind.get('PodMonitor')!;
    assert.equal(podMonitor.apiVersion, 'monitoring.coreos.com/v1');
    assert.ok(matches(podMonitor.spec.selector.matchLabels), 'PodMonitor selector');
    assert.ok(podMonitor.spec.podMetricsEndpoints.some((e: any) => e.port === 'metrics' && e.path === '/metrics'));
    const pdb = byKind.get('PodDisruptionBudget')!;
    assert.equal(pdb.apiVersion, 'policy/v1');
    assert.ok(matches(pdb.spec.selector.matchLabels), 'PDB selector');
  });
});

describe('Docker', () => {
  const dockerfile = read('deploy', 'docker', 'Dockerfile');
  const compose = parse(read('deploy', 'docker', 'compose.yml')) as Record<string, any>;

  test('Dockerfile: multi-stage, npm ci + tsc, production deps, non-root, SIGTERM, port, volume', () => {
    const stages = [...dockerfile.matchAll(/^FROM\s+\S+(?:\s+AS\s+(\S+))?/gim)];
    assert.ok(stages.length >= 2, 'multi-stage');
    assert.match(dockerfile, /npm ci\b/);
    assert.match(dockerfile, /npx tsc -p /);
    assert.match(dockerfile, /npm ci --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const user = /^USER\s+(\S+)/m.exec(runtime);
    assert.ok(user && !/^(root|0)$/.test(user[1]!), 'the runtime stage runs as a non-root user');
    assert.match(runtime, /^STOPSIGNAL SIGTERM$/m);
    assert.match(runtime, /^EXPOSE 9464$/m);
    const stateDir = /DEDUP_STATE_DIR=(\S+)/.exec(runtime)?.[1];
    assert.ok(stateDir, 'DEDUP_STATE_DIR set in the image');
    assert.match(runtime, new RegExp(`^VOLUME \\["${stateDir}"\\]$`, 'm'));
    assert.match(runtime, /^HEALTHCHECK [^]*?\/healthz/m);
    const entry = /^ENTRYPOINT \["node", "([^"]+)"\]$/m.exec(runtime);
    assert.ok(entry && existsSync(join(REPO_ROOT, entry[1]!)), `the entry point ${entry?.[1]} must exist after the build`);
    const known = new Set(CONFIG_OPTIONS.map((o) => o.env));
    for (const m of dockerfile.matchAll(/\b(DEDUP_[A-Z0-9_]+)=/g)) assert.ok(known.has(m[1]!), `${m[1]} is not a DEDUP_* option`);
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim());
    for (const p of ['node_modules', 'dist', '.git']) assert.ok(ignore.includes(p), `.dockerignore should exclude ${p}`);
  });

  test('compose: Kafka KRaft 3.x, the pipeline with a valid config, Prometheus with our rules', () => {
    const s = compose.services;
    assert.match(s.kafka.image, /^apache\/kafka:3\./, 'kafkajs 2.2.4 needs Kafka 3.x');
    assert.equal(s.kafka.environment.KAFKA_PROCESS_ROLES, 'broker,controller');
    assert.ok(existsSync(join(REPO_ROOT, 'deploy', 'docker', s.dedup.build.context, s.dedup.build.dockerfile)), 'dedup build');
    const env = s.dedup.environment as Record<string, string>;
    const known = new Set(CONFIG_OPTIONS.map((o) => o.env));
    for (const svc of ['dedup', 'demo-feed']) {
      for (const name of Object.keys(s[svc].environment)) assert.ok(known.has(name), `${svc}: ${name} is not a DEDUP_* option`);
      loadConfig(s[svc].environment);
    }
    const sizing = podSizing(Number(env.DEDUP_EXPECTED_FINGERPRINTS));
    assert.equal(Number(env.DEDUP_MEMORY_BUDGET_BYTES), sizing.memoryBudgetBytes, 'compose budget');
    assert.equal(s.dedup.mem_limit, `${sizing.podMemoryMiB}m`, 'compose mem_limit');
    assert.equal(s.dedup.stop_signal, 'SIGTERM');
    assert.ok(parseInt(s.dedup.stop_grace_period, 10) >= 90, 'stop_grace_period');
    for (const svc of Object.values(s) as Record<string, any>[]) {
      for (const v of (svc.volumes ?? []) as string[]) {
        const host = v.split(':')[0]!;
        if (host.startsWith('.')) assert.ok(existsSync(join(REPO_ROOT, 'deploy', 'docker', host)), `compose mounts missing ${host}`);
      }
    }
  });
});

describe('sizing against measurements', () => {
  test('a pod sized for N holds the peak RSS measured at N pages (bench/results/memory.json) and the runtime allowance, from 10M pages', () => {
    // Below 10M the fixed costs (the heap between collections, merge buffers) dominate the peak;
    // the formula is for the sizes where the per-page arrays do.
    const runs = (JSON.parse(read('bench', 'results', 'memory.json')) as { runs: { pagesHeld: number; tier: string; peakRamBytesPerPage: number }[] }).runs.filter((r) => r.tier === 'file' && r.pagesHeld >= 10_000_000);
    assert.ok(runs.length > 0, 'a measured run at 10M pages or more');
    // The measured RSS is growth over the empty process; the runtime allowance is Node, kafkajs, the worker heaps.
    for (const r of runs) {
      const pod = podSizing(r.pagesHeld).podMemoryMiB * 1024 * 1024;
      assert.ok(r.peakRamBytesPerPage * r.pagesHeld + SIZING.runtimeBytes <= pod, `${r.pagesHeld} pages: peak ${r.peakRamBytesPerPage} B a page needs more than ${pod / 2 ** 20} MiB`);
    }
  });
});

describe('docs/operations.md', () => {
  test('generated sections equal what scripts/gen-operations-doc.ts renders (run it to fix)', () => {
    assert.equal(renderOperationsDoc(docs), docs, 'docs/operations.md is out of date: node dist/scripts/gen-operations-doc.js');
  });

  test('every option, metric and alert has its place', () => {
    for (const o of CONFIG_OPTIONS) assert.ok(docs.includes(`\`${o.env}\``), `option ${o.env}`);
    for (const name of METRIC_NAMES) assert.ok(docs.includes(`\`${name}\``), `metric ${name}`);
    for (const rule of rules.alerting) assert.match(docs, new RegExp(`^### ${rule.alert}$`, 'm'), `alert ${rule.alert}`);
  });

  test('links to operations.md anchors resolve (the doc itself and deploy/)', () => {
    const docAnchors = anchors(docs);
    for (const m of docs.matchAll(/\]\(#([^)]+)\)/g)) assert.ok(docAnchors.has(m[1]!), `docs link #${m[1]}`);
    const deployFiles = ['k8s/configmap.yaml', 'k8s/statefulset.yaml', 'docker/compose.yml', 'prometheus/dedup.rules.yml'];
    for (const f of deployFiles) {
      for (const m of read('deploy', f).matchAll(/operations\.md#([a-z0-9-]+)/g)) assert.ok(docAnchors.has(m[1]!), `deploy/${f} links #${m[1]}`);
    }
  });
});
