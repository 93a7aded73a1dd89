import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_OPTIONS, loadConfig } from '../../../src/config.js';
import { ConfigError } from '../../../src/errors.js';

test('defaults load and the result is frozen', () => {
  const config = loadConfig({});
  assert.equal(config.k, 3);
  assert.equal(config.pagesTopic, 'crawl.pages');
  assert.deepEqual(config.brokers, ['127.0.0.1:9092']);
  assert.equal(config.tableBlocks, null);
  assert.ok(Object.isFrozen(config));
});

test('flags win over the environment, which wins over defaults', () => {
  const config = loadConfig({ DEDUP_K: '4', DEDUP_GROUP_ID: 'from-env' }, ['--k=2', '--table-plan', '13,13,13,13,12']);
  assert.equal(config.k, 2);
  assert.equal(config.groupId, 'from-env');
  assert.deepEqual(config.tableBlocks, [13, 13, 13, 13, 12]);
});

test('every problem is reported at once, with the option named', () => {
  let error: unknown;
  try {
    loadConfig(
      { DEDUP_K: 'three', DEDUP_NOVEL_TOPIC: 'crawl.pages', DEDUP_TYPO: '1', DEDUP_OUTPUT_FORMAT: 'avro', DEDUP_KAFKA_SASL_MECHANISM: 'plain' },
      ['--table-plan=16,16,16', '--nope=1'],
    );
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof ConfigError);
  assert.equal(error.code, 'CONFIG_INVALID');
  const text = error.problems.join('\n');
  for (const expected of ['DEDUP_K', 'must be distinct', 'DEDUP_TYPO', 'sum to 64', '--nope', 'needs schemaRegistryUrl', 'kafkaSaslUsername']) {
    assert.ok(text.includes(expected), `problems mention ${expected}:\n${text}`);
  }
});

test('a plan with no more blocks than k is refused', () => {
  assert.throws(() => loadConfig({}, ['--k=4', '--table-plan=16,16,16,16']), /cannot answer k=4/);
});

test('routed mode loads with its topics, and refuses what it does not do yet (a window)', () => {
  const config = loadConfig({ DEDUP_MODE: 'routed', DEDUP_INDEX_PARTITIONS: '16' });
  assert.equal(config.mode, 'routed');
  assert.equal(config.indexPartitions, 16);
  assert.deepEqual([config.indexTopic, config.orderTopic, config.repliesTopic, config.idsTopic], ['dedup.index', 'dedup.order', 'dedup.replies', 'dedup.ids']);
  assert.equal(loadConfig({ DEDUP_MODE: 'routed', DEDUP_STANDBY_REPLICAS: '1' }).standbyReplicas, 1);
  assert.throws(() => loadConfig({ DEDUP_MODE: 'routed', DEDUP_MAX_FINGERPRINTS: '1000' }), /not supported with mode=routed/);
  assert.throws(() => loadConfig({ DEDUP_MODE: 'routed', DEDUP_ORDER_TOPIC: 'crawl.pages' }), /must be distinct/);
  // The same setting in sharded mode is fine: the refusal is routed mode's own.
  assert.equal(loadConfig({ DEDUP_MODE: 'sharded', DEDUP_MAX_FINGERPRINTS: '1000' }).maxFingerprints, 1000);
});

test('every option has an env var, a flag and a description, all unique', () => {
  const envs = new Set(CONFIG_OPTIONS.map((o) => o.env));
  const flags = new Set(CONFIG_OPTIONS.map((o) => o.flag));
  assert.equal(envs.size, CONFIG_OPTIONS.length);
  assert.equal(flags.size, CONFIG_OPTIONS.length);
  for (const o of CONFIG_OPTIONS) {
    assert.match(o.env, /^DEDUP_[A-Z0-9_]+$/);
    assert.ok(o.description.length > 10, o.key);
    // The default itself must validate.
    assert.doesNotThrow(() => loadConfig({ [o.env]: o.default }), o.key);
  }
});

test('Kubernetes service-link variables of a Service named "dedup" are not typos', () => {
  const config = loadConfig({ DEDUP_SERVICE_HOST: '10.0.0.1', DEDUP_SERVICE_PORT: '9464', DEDUP_PORT: 'tcp://10.0.0.1:9464', DEDUP_PORT_9464_TCP_ADDR: '10.0.0.1' });
  assert.equal(config.k, 3);
  assert.throws(() => loadConfig({ DEDUP_SERVCE_HOST: 'x' }), /unknown environment variable DEDUP_SERVCE_HOST/);
});
