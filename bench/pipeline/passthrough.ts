/**
 * The passthrough baseline: the pipeline's own consumer and transactional
 * producer (createCrawledPagesConsumer + createVerdictProducer, so the same
 * fetch sizes, chunking by maxBatchRecords, one transaction per chunk with the
 * input offsets, the same metrics) around a processor that does no work: no
 * decoding, no fingerprinting, no index. Every input value is forwarded as is
 * to the novel topic and a changelog-sized stub goes to the changelog topic,
 * so each transaction carries the records the pipeline's would (it carries
 * slightly more bytes: the pipeline's duplicate verdicts do not repeat the
 * HTML).
 *
 *   DEDUP_* env as for `dedup run`; node dist/bench/pipeline/passthrough.js
 *
 * Ready (/readyz 200) once the consumer has joined its group; stops cleanly
 * on SIGTERM.
 */
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { startMetricsServer } from '../../src/metrics/metrics-server.js';
import { createVerdictProducer } from '../../src/kafka/verdict-producer.js';
import { createCrawledPagesConsumer } from '../../src/consumers/crawled-pages.consumer.js';
import type { InputRecord, OutputMessage, PageBatchProcessor, ProcessedChunk } from '../../src/chunk/page-batch-processor.js';

/** About the size of an Avro changelog entry (5-byte header, id, 8-byte fingerprint, flags, times, sequence). */
export const CHANGE_STUB_BYTES = 40;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel, { app: 'dedup-bench-passthrough' });
  const kafka = createKafka(config, logger);
  if (config.createTopics) await ensureTopics(kafka, config, logger);
  let joined = () => false;
  const registry = new Registry();
  const metrics = createMetrics(registry, {
    indexFingerprints: () => 0,
    indexBytes: () => 0,
    indexMemoryLimitBytes: () => 0,
    indexTables: () => 0,
    planCandidatesPerProbe: () => 0,
    ready: () => joined(),
  });
  const server = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry, ready: () => joined() });
  const producer = createVerdictProducer(kafka, `${config.groupId}-${config.instanceId}`);
  await producer.connect();

  const stub = Buffer.alloc(CHANGE_STUB_BYTES, 1);
  // No decoding, no fingerprinting: `prepare` only carries the records, and
  // `decide` forwards them, so the consumer's two stages cost nothing.
  const forward = async (records: readonly InputRecord[]): Promise<ProcessedChunk> => {
      const forwarded: OutputMessage[] = [];
      const changes: OutputMessage[] = [];
      const timestamps: number[] = [];
      for (const r of records) {
        forwarded.push({ key: r.key, value: r.value ?? Buffer.alloc(0) });
        changes.push({ key: r.key, value: stub });
        timestamps.push(Number(r.timestamp));
      }
      const topicMessages = new Map<string, OutputMessage[]>([
        [config.novelTopic, forwarded],
        [config.fingerprintsTopic, changes],
      ]);
      return { topicMessages, novel: records.length, duplicates: 0, deadLetters: new Map(), timestamps, verdicts: [] };
  };
  const processor: PageBatchProcessor = {
    prepare: async (records) => ({ records, timestamps: [], decoded: [], results: [] }),
    decide: (prepared) => forward(prepared.records),
    process: forward,
  };

  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const consumer = createCrawledPagesConsumer({ kafka, config, processor, producer, metrics, logger, onFatal: (e) => fail(e) });
  joined = () => consumer.joined;
  await consumer.start();
  logger.info('passthrough running', { metricsPort: server.port });

  const code = await new Promise<number>((resolve) => {
    process.once('SIGTERM', () => resolve(0));
    process.once('SIGINT', () => resolve(0));
    void failed.then((error) => {
      logger.error('passthrough failed', { error });
      resolve(1);
    });
  });
  await consumer.stop().catch(() => undefined);
  await producer.disconnect().catch(() => undefined);
  await server.close();
  process.exit(code);
}

main().catch((error: unknown) => {
  process.stderr.write(`passthrough: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
