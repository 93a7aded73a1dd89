/**
 * The sharded Kubernetes overlay: it scales the base StatefulSet past one
 * replica only together with DEDUP_MODE=sharded (a single-mode replica 2
 * would be refused at start-up), and every DEDUP_* variable it sets is an
 * option the process knows (an unknown one stops it at start-up).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CONFIG_OPTIONS, loadConfig } from '../../../src/config.js';

const K8S = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'deploy', 'k8s');

interface Op { op: string; path: string; value: unknown }

test('the sharded overlay runs several replicas in sharded mode with valid options', () => {
  const overlay = parse(readFileSync(join(K8S, 'sharded', 'kustomization.yaml'), 'utf8')) as { resources: string[]; patches: { target: { kind: string; name: string }; patch: string }[] };
  assert.deepEqual(overlay.resources, ['../']);
  const ops = (kind: string) => overlay.patches.filter((p) => p.target.kind === kind).flatMap((p) => parse(p.patch) as Op[]);
  const base = parse(readFileSync(join(K8S, 'statefulset.yaml'), 'utf8')) as { metadata: { name: string } };
  for (const p of overlay.patches) assert.equal(p.target.name, base.metadata.name);
  const replicas = ops('StatefulSet').find((o) => o.path === '/spec/replicas');
  assert.ok(replicas && (replicas.value as number) > 1);
  const env: Record<string, string> = {};
  const configMap = parse(readFileSync(join(K8S, 'configmap.yaml'), 'utf8')) as { data: Record<string, string> };
  Object.assign(env, configMap.data);
  for (const o of ops('ConfigMap')) env[o.path.replace('/data/', '')] = String(o.value);
  assert.equal(env.DEDUP_MODE, 'sharded');
  const known = new Set(CONFIG_OPTIONS.map((o) => o.env));
  assert.deepEqual(Object.keys(env).filter((k) => k.startsWith('DEDUP_') && !known.has(k)), []);
  const config = loadConfig({ ...env, DEDUP_INSTANCE_ID: 'simhash-dedup-0' });
  assert.ok(config.shards >= (replicas.value as number), 'at least one shard per replica');
});
