/**
 * Reading the observability artifacts (deploy/grafana, deploy/prometheus) the
 * way Prometheus and Grafana would: every PromQL expression they hold, the
 * metric names those expressions select, and Grafana's template variables
 * substituted. Shared by the unit test (names, structure, promtool) and the
 * integration test (every expression evaluated against a real Prometheus).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The repository root (this file runs from dist/test/unit/deploy/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

export const DASHBOARD_FILE = join(REPO_ROOT, 'deploy', 'grafana', 'dedup-dashboard.json');
export const RULES_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'dedup.rules.yml');
export const RULE_TESTS_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'dedup.test.yml');

export interface RecordingRule {
  record: string;
  expr: string;
  labels?: Record<string, string>;
}

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFile {
  groups: { name: string; interval?: string; rules: (RecordingRule | AlertingRule)[] }[];
}

export function loadRules(file = RULES_FILE): { recording: RecordingRule[]; alerting: AlertingRule[] } {
  const doc = parse(readFileSync(file, 'utf8')) as RuleFile;
  const recording: RecordingRule[] = [];
  const alerting: AlertingRule[] = [];
  for (const group of doc.groups) {
    for (const rule of group.rules) {
      if ('record' in rule) recording.push(rule);
      else alerting.push(rule);
    }
  }
  return { recording, alerting };
}

// ---- the dashboard -------------------------------------------------------------------------

export interface DashboardTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

export interface TemplateVariable {
  name: string;
  type: string;
  query?: string | { query?: string };
  datasource?: { type?: string; uid?: string };
  allValue?: string;
  includeAll?: boolean;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: TemplateVariable[] };
  annotations: { list: { name: string; expr?: string; datasource?: { uid?: string } }[] };
}

export function loadDashboard(file = DASHBOARD_FILE): Dashboard {
  return JSON.parse(readFileSync(file, 'utf8')) as Dashboard;
}

/** Every panel, rows' nested panels included, rows themselves excluded. */
export function allPanels(dashboard: Dashboard): DashboardPanel[] {
  const out: DashboardPanel[] = [];
  const walk = (panels: DashboardPanel[]) => {
    for (const p of panels) {
      if (p.type !== 'row') out.push(p);
      if (p.panels) walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

export interface DashboardQuery {
  /** Where the expression lives, for messages: "panel 'Pages in' A". */
  where: string;
  expr: string;
  kind: 'panel' | 'annotation' | 'variable';
}

function variableQuery(v: TemplateVariable): string {
  return typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
}

/**
 * `label_values(metric{selector}, label)` (Grafana's variable query) as the
 * PromQL that returns the same label values.
 */
export function labelValuesToPromql(query: string): string {
  const m = /^\s*label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/.exec(query);
  if (!m) throw new Error(`not a label_values(metric, label) query: ${query}`);
  return `group by (${m[2]}) (${m[1]})`;
}

/** Every PromQL expression in the dashboard: panel targets, annotations, variable queries. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  for (const p of allPanels(dashboard)) {
    for (const t of p.targets ?? []) out.push({ where: `panel '${p.title}' ${t.refId}`, expr: t.expr, kind: 'panel' });
  }
  for (const a of dashboard.annotations.list) {
    if (a.expr) out.push({ where: `annotation '${a.name}'`, expr: a.expr, kind: 'annotation' });
  }
  for (const v of dashboard.templating.list) {
    if (v.type === 'query') out.push({ where: `variable '${v.name}'`, expr: labelValuesToPromql(variableQuery(v)), kind: 'variable' });
  }
  return out;
}

/**
 * Grafana's substitutions as they would be made for "All" selected:
 * `$__rate_interval` 1m, `$__interval` 15s, `$__range` 1h, `$job`/`$instance` `.+`.
 */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}/g, '1m')
    .replace(/\$__interval|\$\{__interval\}/g, '15s')
    .replace(/\$__range|\$\{__range\}/g, '1h')
    .replace(/\$\{?(job|instance)\}?/g, '.+');
}

// ---- PromQL ----------------------------------------------------------------------------------

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);

const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;

/** The expression with ranges and grouping label lists taken out (braces and strings kept). */
function withoutNoise(expr: string): string {
  return expr.replace(/\[[^\]]*\]/g, '[]').replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
}

export interface VectorSelector {
  name: string;
  /** The text between the braces, '' when there are none. */
  matchers: string;
}

/**
 * The vector selectors of a PromQL expression: identifiers that are not a
 * function or aggregation (followed by `(`), a keyword, part of a number or a
 * duration, inside a string, or a label inside braces.
 */
export function vectorSelectors(expr: string): VectorSelector[] {
  const s = withoutNoise(expr);
  // Same length as s, strings blanked: positions line up, string contents are never identifiers.
  const blank = s.replace(STRING, (m) => `${m[0]}${' '.repeat(m.length - 2)}${m[0]}`);
  const out: VectorSelector[] = [];
  const identifier = /[a-zA-Z_:][a-zA-Z0-9_:]*/g;
  let depth = 0;
  let last = 0;
  for (let m = identifier.exec(blank); m !== null; m = identifier.exec(blank)) {
    for (let i = last; i < m.index; i++) {
      if (blank[i] === '{') depth++;
      else if (blank[i] === '}') depth--;
    }
    last = m.index;
    if (depth > 0) continue; // a label name inside a matcher
    const id = m[0];
    const before = blank[m.index - 1];
    if (before !== undefined && /[0-9.]/.test(before)) continue; // 1e5, 5m
    const end = m.index + id.length;
    if (/^\s*\(/.test(blank.slice(end))) continue; // function or aggregation
    if (KEYWORDS.has(id.toLowerCase())) continue;
    const braces = /^\s*\{[^}]*\}/.exec(blank.slice(end));
    const matchers = braces ? s.slice(end, end + braces[0].length).trim().slice(1, -1).trim() : '';
    out.push({ name: id, matchers });
  }
  return out;
}

export function metricNamesIn(expr: string): string[] {
  return [...new Set(vectorSelectors(expr).map((s) => s.name))];
}

// ---- modes -----------------------------------------------------------------------------------

/**
 * Series a single-mode process never exports: labelled by shard, reset at every
 * scrape and filled from the shards held (none in single mode), or by record
 * kind of routed mode's coordination topics (none in single mode). The other
 * sharded-mode metrics carry no labels, so single mode exports them at 0.
 */
export const SHARDED_ONLY_METRICS: ReadonlySet<string> = new Set(['dedup_shard_fingerprints', 'dedup_routed_bytes_total', 'dedup_routed_records_total']);

/** True when an expression selects only sharded-only series, so it is empty for a single-mode process. */
export function emptyInSingleMode(expr: string): boolean {
  const names = metricNamesIn(expr);
  return names.length > 0 && names.every((n) => SHARDED_ONLY_METRICS.has(n));
}
