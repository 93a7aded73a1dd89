/**
 * Configuration: read once at start-up from the environment (DEDUP_*) and
 * command-line flags (--name=value or --name value), defaults filled, every problem reported
 * at once, cross-field rules checked, result frozen.
 *
 * `CONFIG_OPTIONS` is the single source of truth: docs/operations.md's config
 * table is generated from it and a test fails when the two drift.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './errors.js';
import { redactUrl } from './wire/redact-url.js';
import { BAND_COUNTS } from './dedup/sketch-bands.js';

type Kind = 'string' | 'int' | 'number' | 'boolean' | 'list' | 'enum';

export interface OptionSpec {
  /** Key in the resulting config object. */
  readonly key: string;
  readonly env: string;
  readonly flag: string;
  readonly kind: Kind;
  readonly default: string;
  readonly description: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly secret?: boolean;
}

function opt(key: string, kind: Kind, def: string, description: string, extra: Partial<OptionSpec> = {}): OptionSpec {
  const snake = key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
  const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return Object.freeze({ key, env: `DEDUP_${snake}`, flag: `--${kebab}`, kind, default: def, description, ...extra });
}

export const CONFIG_OPTIONS: readonly OptionSpec[] = Object.freeze([
  opt('brokers', 'list', '127.0.0.1:9092', 'Kafka bootstrap brokers, comma-separated host:port.'),
  opt('clientId', 'string', 'simhash-dedup', 'Kafka client id.'),
  opt('groupId', 'string', 'simhash-dedup', 'Consumer group id of the pipeline.'),
  opt('instanceId', 'string', 'dedup-0', 'Stable id of this instance; the transactional id is <groupId>-<instanceId>, so a restarted instance fences its zombie.'),
  opt('pagesTopic', 'string', 'crawl.pages', 'Input topic the crawler publishes pages to.'),
  opt('novelTopic', 'string', 'pages.novel', 'Output topic for novel pages (the downstream indexer reads it).'),
  opt('duplicateTopic', 'string', 'pages.duplicate', 'Output topic for duplicates, with what they duplicate.'),
  opt('deadLetterTopic', 'string', 'crawl.pages.dlq', 'Dead-letter topic for undecodable or invalid records, with the reason.'),
  opt('fingerprintsTopic', 'string', 'simhash.fingerprints', 'Compacted changelog of the index (recovery, replicas).'),
  opt('mode', 'enum', 'single', 'single: one instance holds the whole index (the embedded default); sharded: instances with the same groupId share the input partitions and the index shards; routed: they share the input partitions and the partitions of a routed index, each probe going only where it can match (docs/architecture.md).', { values: ['single', 'sharded', 'routed'] }),
  opt('shards', 'int', '12', 'Index shards in sharded mode: partitions of the changelog topic, spread over the instances (more shards than instances lets instances be added).', { min: 1, max: 4096 }),
  opt('standbyReplicas', 'int', '0', 'Sharded mode: warm copies of each shard held by other instances (0 or 1), so a failover takes a shard over without restoring it. Routed mode: a warm copy of each index partition on another instance, which replies too (the first reply wins).', { min: 0, max: 1 }),
  opt('standbyTopic', 'string', 'dedup.standby', 'Sharded and routed modes with standbyReplicas: an empty topic with one partition per shard (per index partition in routed mode), whose assignment names the standby copies.'),
  opt('sequenceTopic', 'string', 'dedup.sequence', 'Sharded mode: the one-partition log whose offsets order every page (the global decision order).'),
  opt('answersTopic', 'string', 'dedup.answers', 'Sharded mode: the one-partition log of the shards\u2019 answers and watermarks.'),
  opt('indexPartitions', 'int', '64', 'Routed mode: partitions of the index topic, the unit of index ownership; fixed when the topic is created (routing depends on it).', { min: 1, max: 4096 }),
  opt('indexTopic', 'string', 'dedup.index', 'Routed mode: the index topic, one record per chunk and touched partition (the pages routed there); with the order log it rebuilds the index.'),
  opt('orderTopic', 'string', 'dedup.order', 'Routed mode: the one-partition log with one record per chunk, whose offsets order every chunk (the global decision order).'),
  opt('repliesTopic', 'string', 'dedup.replies', 'Routed mode: the index partitions\u2019 replies, as many partitions as the input (a reply lands where its chunk\u2019s owner reads).'),
  opt('idsTopic', 'string', 'dedup.ids', 'Routed mode: the compacted id store of each input partition (page id to its verdict), written in the verdict transaction.'),
  opt('createTopics', 'boolean', 'true', 'Create missing topics at start-up (changelog compacted).'),
  opt('topicPartitions', 'int', '3', 'Partitions for topics created at start-up.', { min: 1, max: 10000 }),
  opt('replicationFactor', 'int', '1', 'Replication factor for topics created at start-up.', { min: 1, max: 16 }),
  opt('schemaRegistryUrl', 'string', '', 'Confluent-compatible schema registry URL; empty means JSON on the wire.'),
  opt('schemaRegistryTimeoutMs', 'int', '5000', 'Deadline of one schema registry call in milliseconds; a registry that does not answer in time is an outage (the batch is retried).', { min: 100, max: 600000 }),
  opt('schemaRegistryUsername', 'string', '', 'Schema registry basic-auth user name (or put user:password in the URL; it is never logged).'),
  opt('schemaRegistryPassword', 'string', '', 'Schema registry basic-auth password.', { secret: true }),
  opt('schemaRegistryCaFile', 'string', '', 'PEM file of the CA that signed an https schema registry\u2019s certificate; empty = the system CA store.'),
  opt('outputFormat', 'enum', 'auto', 'Encoding of records written: avro (needs a registry), json, or auto (avro when a registry is set).', { values: ['auto', 'avro', 'json'] }),
  opt('kafkaSsl', 'boolean', 'false', 'Use TLS to the brokers (system CA store, or DEDUP_KAFKA_SSL_CA_FILE).'),
  opt('kafkaSslCaFile', 'string', '', 'PEM file of the CA that signed the brokers\u2019 certificates.'),
  opt('kafkaSaslMechanism', 'enum', 'none', 'SASL mechanism.', { values: ['none', 'plain', 'scram-sha-256', 'scram-sha-512'] }),
  opt('kafkaSaslUsername', 'string', '', 'SASL user name.'),
  opt('kafkaSaslPassword', 'string', '', 'SASL password.', { secret: true }),
  opt('k', 'int', '3', 'Maximum Hamming distance (bits of 64) at which two pages are near-duplicates.', { min: 0, max: 16 }),
  opt('secondStageRadius', 'int', '0', 'Second stage: also probe the tables at this radius (above k), each earlier page found at k < distance <= radius a candidate confirmed as secondStageSimilarity says. 0 = no wider probe (the sketch bands alone find candidates beyond k). The index is planned for this radius (more tables; see docs/quality.md for the trade-off).', { min: 0, max: 16 }),
  opt('secondStageSimilarity', 'number', '0.85', 'Second stage: least share of the larger page\u2019s words and shingles that the other page holds, estimated from their 64-byte sketches (the Jaccard similarity of 56 b-bit MinHash bins and the two pages\u2019 sizes), that confirms a candidate beyond k (whose content numbers must be the same, too). 0.85: a page with 15% of its text replaced, added or removed is at the threshold. A pair below it is still confirmed when one script\u2019s text was replaced with another\u2019s and nothing else changed (a page left partly in its source language; docs/fingerprint.md).', { min: 0, max: 1 }),
  opt('secondStageBands', 'int', '14', 'Second stage: take as candidates the pages whose feature sketch shares all the bins of one of this many bands with the page\u2019s (locality-sensitive hashing over the sketch), at any simhash distance, each confirmed as secondStageSimilarity says. 0, 2, 4, 7, 8, 14 or 28 (bands of equal width over the sketch\u2019s 56 bins); 14 (bands of 4 bins) finds two pages of one size at the threshold 0.85 (Jaccard 0.74) with probability 0.99, 7 (bands of 8) with 0.48, for half the bytes (held-out F1 0.978 at 7 bands, 0.985 at 14). The second stage is on when this or secondStageRadius is above 0; both 0 = off (k alone, the paper\u2019s simhash, without the 64-byte sketch and, per band and page, the 1.5 bytes of RAM and 12 of disk the bands keep; docs/operations.md#sizing).', { min: 0, max: 32 }),
  opt('tablePlan', 'string', 'auto', 'Index table plan: auto (planned from expectedFingerprints and the memory budget) or block widths, e.g. 16,16,16,16.'),
  opt('expectedFingerprints', 'int', '10000000', 'Fingerprints the index is planned for.', { min: 1 }),
  opt('memoryBudgetBytes', 'int', '0', 'Memory budget for the index in bytes; 0 = no budget. Also the limit the capacity alert watches.', { min: 0 }),
  opt('maxFingerprints', 'int', '0', 'Evict the oldest fingerprints beyond this many; 0 = never. Sharded mode: a page sees only the pages of the last this-many sequence records (a window of the global order, so every holder of a shard agrees).', { min: 0 }),
  opt('maxAgeSeconds', 'int', '0', 'Evict fingerprints older than this (by page fetch time); 0 = never.', { min: 0 }),
  opt('shingleSize', 'int', '0', 'Word shingle length for features; 0 = the fingerprinter\u2019s default.', { min: 0, max: 16 }),
  opt('boilerplate', 'enum', 'remove', 'Boilerplate handling in HTML (navigation, footers, ads, widgets).', { values: ['remove', 'keep'] }),
  opt('cjk', 'enum', 'jieba', 'Chinese/Japanese segmentation.', { values: ['jieba', 'bigram', 'off'] }),
  opt('weighting', 'enum', 'default', 'Feature weights; default = the fingerprinter\u2019s default.', { values: ['default', 'tf', 'log-tf', 'tfidf', 'binary'] }),
  opt('minFeatures', 'int', '0', 'Pages with fewer features are matched only exactly; 0 = the fingerprinter\u2019s default.', { min: 0 }),
  opt('maxPageBytes', 'int', '4194304', 'Pages larger than this go to the dead-letter topic.', { min: 1024 }),
  opt('stateDir', 'string', '.state', 'Directory for index snapshots.'),
  opt('snapshotIntervalSeconds', 'int', '300', 'Write a snapshot at most this often (and at shutdown); 0 = only at shutdown.', { min: 0 }),
  opt('metricsHost', 'string', '0.0.0.0', 'Address the /metrics, /healthz and /readyz server binds to.'),
  opt('metricsPort', 'int', '9464', 'Port of the metrics server; 0 = disabled.', { min: 0, max: 65535 }),
  opt('fingerprintThreads', 'int', '0', 'Worker threads that decode, validate and fingerprint pages and encode novel verdicts (the main thread keeps the Kafka I/O): 0 = one per core (none on a single core), -1 = none (all in the consuming thread), N = N workers.', { min: -1, max: 256 }),
  opt('maxBatchRecords', 'int', '500', 'Records per transaction at most: a fetched batch is split into chunks of this size, and chunks of several input partitions share a transaction up to it.', { min: 1, max: 100000 }),
  opt('commitLingerMs', 'int', '20', 'Single mode: how long a transaction waits at most, after its oldest chunk was decided, for the first chunks of the other input partitions fetched with it, which then share it; 0 = never waits.', { min: 0, max: 1000 }),
  opt('singleInstance', 'enum', 'refuse', 'What to do when another instance is in the group of this unsharded index: refuse (exit) or warn.', { values: ['refuse', 'warn'] }),
  opt('logLevel', 'enum', 'info', 'Level of the JSON log lines written to stderr.', { values: ['error', 'warn', 'info', 'debug'] }),
]);

export interface DedupConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly instanceId: string;
  readonly pagesTopic: string;
  readonly novelTopic: string;
  readonly duplicateTopic: string;
  readonly deadLetterTopic: string;
  readonly fingerprintsTopic: string;
  readonly mode: 'single' | 'sharded' | 'routed';
  readonly shards: number;
  readonly standbyReplicas: number;
  readonly standbyTopic: string;
  readonly sequenceTopic: string;
  readonly answersTopic: string;
  readonly indexPartitions: number;
  readonly indexTopic: string;
  readonly orderTopic: string;
  readonly repliesTopic: string;
  readonly idsTopic: string;
  readonly createTopics: boolean;
  readonly topicPartitions: number;
  readonly replicationFactor: number;
  readonly schemaRegistryUrl: string;
  readonly schemaRegistryTimeoutMs: number;
  readonly schemaRegistryUsername: string;
  readonly schemaRegistryPassword: string;
  readonly schemaRegistryCaFile: string;
  readonly outputFormat: 'auto' | 'avro' | 'json';
  readonly kafkaSsl: boolean;
  readonly kafkaSslCaFile: string;
  readonly kafkaSaslMechanism: 'none' | 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly kafkaSaslUsername: string;
  readonly kafkaSaslPassword: string;
  readonly k: number;
  readonly secondStageRadius: number;
  readonly secondStageSimilarity: number;
  readonly secondStageBands: number;
  readonly tablePlan: string;
  readonly expectedFingerprints: number;
  readonly memoryBudgetBytes: number;
  readonly maxFingerprints: number;
  readonly maxAgeSeconds: number;
  readonly shingleSize: number;
  readonly boilerplate: 'remove' | 'keep';
  readonly cjk: 'jieba' | 'bigram' | 'off';
  readonly weighting: 'default' | 'tf' | 'log-tf' | 'tfidf' | 'binary';
  readonly minFeatures: number;
  readonly maxPageBytes: number;
  readonly stateDir: string;
  readonly snapshotIntervalSeconds: number;
  readonly metricsHost: string;
  readonly metricsPort: number;
  readonly fingerprintThreads: number;
  readonly maxBatchRecords: number;
  readonly commitLingerMs: number;
  readonly singleInstance: 'refuse' | 'warn';
  readonly logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** Block widths when tablePlan is explicit, else null. */
  readonly tableBlocks: readonly number[] | null;
}

/**
 * Kubernetes injects <SERVICE>_SERVICE_HOST, <SERVICE>_PORT_9464_TCP... for
 * every Service in the namespace; a Service named "dedup" must not stop the
 * process from starting.
 */
const KUBERNETES_SERVICE_LINK = /^DEDUP_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

function parseValue(spec: OptionSpec, raw: string, problems: string[]): unknown {
  const where = `${spec.flag} / ${spec.env}`;
  switch (spec.kind) {
    case 'string':
      return raw;
    case 'list': {
      const items = raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
      if (items.length === 0) problems.push(`${where}: needs at least one value`);
      return items;
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (TRUE.has(v)) return true;
      if (FALSE.has(v)) return false;
      problems.push(`${where}: expected true or false, got ${JSON.stringify(raw)}`);
      return false;
    }
    case 'int':
    case 'number': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n) || (spec.kind === 'int' && !Number.isInteger(n))) {
        problems.push(`${where}: expected ${spec.kind === 'int' ? 'an integer' : 'a number'}, got ${JSON.stringify(raw)}`);
        return 0;
      }
      if (spec.min !== undefined && n < spec.min) problems.push(`${where}: must be >= ${spec.min}, got ${n}`);
      if (spec.max !== undefined && n > spec.max) problems.push(`${where}: must be <= ${spec.max}, got ${n}`);
      return n;
    }
    case 'enum': {
      const v = raw.trim().toLowerCase();
      if (!spec.values!.includes(v)) problems.push(`${where}: expected one of ${spec.values!.join(', ')}, got ${JSON.stringify(raw)}`);
      return v;
    }
  }
}

/**
 * Splits flags with node:util parseArgs semantics: `--name value` or
 * `--name=value` for config options and the `own` string options; `own`
 * booleans take no value. Every problem is returned, not thrown, so all are
 * reported at once: an unknown flag, a flag missing its value, a value that
 * looks like a flag (`--brokers --k=2`; write `--name=-1` for a value that
 * starts with a dash), a value given to a boolean.
 */
export function parseFlags(
  argv: readonly string[],
  own: Readonly<Record<string, 'string' | 'boolean'>> = {},
): { flags: Map<string, string>; rest: string[]; problems: string[] } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const o of CONFIG_OPTIONS) options[o.flag.slice(2)] = { type: 'string' };
  for (const [flag, type] of Object.entries(own)) options[flag.replace(/^--/, '')] = { type };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const flags = new Map<string, string>();
  const rest: string[] = [];
  const problems: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') rest.push(token.value);
    if (token.kind !== 'option') continue;
    const type = options[token.name]?.type;
    const flag = `--${token.name}`;
    if (type === undefined) problems.push(`unknown flag ${token.rawName}`);
    else if (type === 'boolean' && token.value !== undefined) problems.push(`${flag} takes no value, got ${JSON.stringify(token.value)}`);
    else if (type === 'string' && token.value === undefined) problems.push(`${flag} needs a value`);
    else if (type === 'string' && !token.inlineValue && token.value!.length > 1 && token.value!.startsWith('-')) {
      problems.push(`${flag} needs a value, got the flag-like ${JSON.stringify(token.value)} (write ${flag}=${token.value} if that is the value)`);
    } else flags.set(flag, token.value ?? 'true');
  }
  return { flags, rest, problems };
}

/**
 * Builds the frozen config. Flags win over the environment, which wins over
 * defaults. Unknown flags and unknown DEDUP_* variables are errors (a typo must
 * not silently fall back to a default).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, argv: readonly string[] = []): DedupConfig {
  const { flags, rest, problems } = parseFlags(argv);
  if (rest.length > 0) problems.push(`unexpected arguments: ${rest.join(' ')}`);
  const knownEnv = new Set(CONFIG_OPTIONS.map((o) => o.env));
  for (const name of Object.keys(env)) {
    if (name.startsWith('DEDUP_') && !knownEnv.has(name) && !KUBERNETES_SERVICE_LINK.test(name)) {
      problems.push(`unknown environment variable ${name}`);
    }
  }

  const out: Record<string, unknown> = {};
  for (const spec of CONFIG_OPTIONS) {
    const raw = flags.get(spec.flag) ?? env[spec.env] ?? spec.default;
    out[spec.key] = parseValue(spec, raw, problems);
  }

  // Cross-field rules.
  const topics = ['pagesTopic', 'novelTopic', 'duplicateTopic', 'deadLetterTopic', 'fingerprintsTopic', 'sequenceTopic', 'answersTopic', 'standbyTopic', 'indexTopic', 'orderTopic', 'repliesTopic', 'idsTopic'] as const;
  const seen = new Map<string, string>();
  for (const t of topics) {
    const name = out[t] as string;
    if (!/^[a-zA-Z0-9._-]{1,249}$/.test(name)) problems.push(`${t}: ${JSON.stringify(name)} is not a valid Kafka topic name`);
    const other = seen.get(name);
    if (other) problems.push(`${t} and ${other} are both ${JSON.stringify(name)}: topics must be distinct`);
    seen.set(name, t);
  }
  let tableBlocks: number[] | null = null;
  const plan = (out.tablePlan as string).trim();
  if (plan !== 'auto') {
    const widths = plan.split(',').map((s) => Number(s.trim()));
    if (widths.some((w) => !Number.isInteger(w) || w < 1)) {
      problems.push(`tablePlan: expected "auto" or comma-separated block widths, got ${JSON.stringify(plan)}`);
    } else {
      const sum = widths.reduce((a, b) => a + b, 0);
      if (sum !== 64) problems.push(`tablePlan: block widths must sum to 64, got ${sum}`);
      const reach = Math.max(out.k as number, out.secondStageRadius as number);
      if (widths.length <= reach) {
        problems.push(`tablePlan: ${widths.length} blocks cannot answer ${reach === out.k ? 'k' : 'secondStageRadius'}=${reach} (need more blocks than that)`);
      }
      tableBlocks = widths;
    }
  }
  if (out.outputFormat === 'avro' && !(out.schemaRegistryUrl as string)) {
    problems.push('outputFormat=avro needs schemaRegistryUrl');
  }
  if (out.schemaRegistryUrl && !/^https?:\/\//.test(out.schemaRegistryUrl as string)) {
    problems.push(`schemaRegistryUrl: expected an http(s) URL, got ${JSON.stringify(out.schemaRegistryUrl)}`);
  }
  if (out.schemaRegistryCaFile && !/^https:\/\//.test(out.schemaRegistryUrl as string)) {
    problems.push('schemaRegistryCaFile needs an https schemaRegistryUrl');
  }
  if (out.schemaRegistryPassword && !out.schemaRegistryUsername) {
    problems.push('schemaRegistryPassword needs schemaRegistryUsername');
  }
  if (out.kafkaSaslMechanism !== 'none' && (!out.kafkaSaslUsername || !out.kafkaSaslPassword)) {
    problems.push('kafkaSaslMechanism needs kafkaSaslUsername and kafkaSaslPassword');
  }
  if (out.mode === 'routed' && ((out.maxAgeSeconds as number) > 0 || (out.maxFingerprints as number) > 0)) {
    problems.push('maxAgeSeconds and maxFingerprints are not supported with mode=routed yet: its index partitions keep every page');
  }
  if (out.mode === 'sharded' && (out.maxAgeSeconds as number) > 0) {
    problems.push('maxAgeSeconds is not supported with mode=sharded: eviction by clock would make two holders of a shard disagree; use maxFingerprints (a window of the sequence)');
  }
  const radius = out.secondStageRadius as number;
  if (radius > 0 && radius <= (out.k as number)) {
    problems.push(`secondStageRadius=${radius} must be above k=${out.k as number} (or 0 = no wider probe)`);
  }
  const bands = out.secondStageBands as number;
  if (bands > 0 && !BAND_COUNTS.includes(bands)) problems.push(`secondStageBands=${bands} must be 0 or one of ${BAND_COUNTS.join(', ')} (bands of equal width over the sketch's 56 bins)`);
  if ((out.groupId as string).length === 0) problems.push('groupId must not be empty');
  if ((out.instanceId as string).length === 0) problems.push('instanceId must not be empty');
  if (problems.length > 0) throw new ConfigError(problems);
  out.tableBlocks = tableBlocks ? Object.freeze(tableBlocks) : null;
  out.brokers = Object.freeze(out.brokers as string[]);
  return Object.freeze(out) as unknown as DedupConfig;
}

/** The config with secrets masked, for the start-up log line. */
export function redactConfig(config: DedupConfig): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...config };
  for (const spec of CONFIG_OPTIONS) if (spec.secret && copy[spec.key]) copy[spec.key] = '***';
  copy.schemaRegistryUrl = redactUrl(config.schemaRegistryUrl);
  return copy;
}
