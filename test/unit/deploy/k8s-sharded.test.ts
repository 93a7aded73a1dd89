/**
 * The sharded Kubernetes overlay, built with kustomize as `kubectl apply -k`
 * would: it scales the StatefulSet past one replica only together with
 * DEDUP_MODE=sharded (a single-mode replica 2 would be refused at start-up),
 * and the process accepts every DEDUP_* variable it ends up with (an unknown
 * one stops it at start-up).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../../src/config.js';
import { kustomize } from './check-tools.js';
import { REPO_ROOT } from './observability-artifacts.js';

test('kustomize build deploy/k8s-sharded: several replicas in sharded mode, with options the process accepts', () => {
  const tool = kustomize();
  if ('missing' in tool) assert.fail(tool.missing);
  const r = spawnSync(tool.command, [...tool.args, join(REPO_ROOT, 'deploy', 'k8s-sharded')], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind: string; spec?: { replicas?: number }; data?: Record<string, string> });
  const sts = objects.find((o) => o.kind === 'StatefulSet')!;
  const configMap = objects.find((o) => o.kind === 'ConfigMap')!;
  assert.ok((sts.spec?.replicas ?? 1) > 1, 'more than one replica');
  assert.equal(configMap.data?.DEDUP_MODE, 'sharded');
  const config = loadConfig({ ...configMap.data, DEDUP_INSTANCE_ID: 'simhash-dedup-0' });
  assert.ok(config.shards >= sts.spec!.replicas!, 'at least one shard per replica');
  assert.equal(config.standbyReplicas, 1);
});
