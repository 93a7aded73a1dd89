/**
 * Changelog replay into an empty decider, in its own process, exactly as the
 * pipeline's start-up does it (replayChangelog with the product's codec and
 * kafkajs client). Config from DEDUP_* as for `dedup run`; the changelog topic
 * is DEDUP_FINGERPRINTS_TOPIC.
 *
 *   node --expose-gc dist/bench/pipeline/replay-case.js
 *
 * Prints one JSON line on stdout: records, seconds (replayChangelog's own,
 * which includes joining its throwaway consumer group), records/s, RSS.
 */
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKafka } from '../../src/kafka/client.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { createRecordCodec } from '../../src/wire/record-codec.js';
import { replayChangelog } from '../../src/kafka/changelog-replay.js';

async function main(): Promise<Record<string, unknown>> {
  const config = loadConfig(process.env);
  const logger = createLogger('warn', { app: 'dedup-bench-replay' });
  const kafka = createKafka(config, logger);
  const registry = new SchemaRegistry({ host: config.schemaRegistryUrl, clientId: config.clientId });
  const codec = await createRecordCodec({ registry, format: 'avro', topics: config, maxPageBytes: config.maxPageBytes });
  const decider = createDecider(config, planFromConfig(config));
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const rssBefore = process.memoryUsage().rss;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = await replayChangelog({ kafka, topic: config.fingerprintsTopic, from: {}, codec, apply: decider, logger, groupIdPrefix: config.groupId });
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  gc?.();
  return {
    records: result.records,
    fingerprints: decider.index.size,
    seconds: wall,
    recordsPerSecond: result.records / wall,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rssBeforeBytes: rssBefore,
    rssAfterBytes: process.memoryUsage().rss,
  };
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`replay-case: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
