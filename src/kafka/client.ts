/**
 * The narrow module that builds kafkajs clients from config (TLS, SASL) and
 * creates the product's topics. kafkajs 2.2.4 is in maintenance: everything
 * else talks to Kafka through the consumer and producer modules, never to
 * kafkajs directly, so the client can be swapped in one place.
 */
import { readFileSync } from 'node:fs';
import { Kafka, type KafkaConfig, type SASLOptions } from 'kafkajs';
import type { DedupConfig } from '../config.js';
import { DedupError } from '../errors.js';
import { kafkaLogCreator, type Logger } from '../logger.js';

/** Unique per instance, so a group member can be recognised as this instance's predecessor. */
export function kafkaClientId(config: DedupConfig): string {
  return `${config.clientId}-${config.instanceId}`;
}

export function createKafka(config: DedupConfig, logger: Logger): Kafka {
  const options: KafkaConfig = {
    clientId: kafkaClientId(config),
    brokers: [...config.brokers],
    logCreator: kafkaLogCreator(logger.child({ component: 'kafkajs' })),
    connectionTimeout: 5000,
    requestTimeout: 30000,
    // A transaction begun right after a commit meets CONCURRENT_TRANSACTIONS
    // until the coordinator finishes the previous one (tens of ms); kafkajs's
    // default 300 ms first retry would make every transaction cost ~270 ms.
    retry: { retries: 10, initialRetryTime: 20, maxRetryTime: 5000 },
  };
  if (config.kafkaSsl) {
    options.ssl = config.kafkaSslCaFile ? { ca: [readFileSync(config.kafkaSslCaFile, 'utf8')] } : true;
  }
  if (config.kafkaSaslMechanism !== 'none') {
    options.sasl = {
      mechanism: config.kafkaSaslMechanism,
      username: config.kafkaSaslUsername,
      password: config.kafkaSaslPassword,
    } as SASLOptions;
  }
  return new Kafka(options);
}

/** Creates any missing product topic; the changelog is compacted. */
export async function ensureTopics(kafka: Kafka, config: DedupConfig, logger: Logger): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    // Pages up to maxPageBytes must fit the input, the novel verdicts that
    // carry them, and the dead letters that carry oversized originals.
    // A record larger than the segment size is refused whatever
    // max.message.bytes says, so large-record topics get segments to match.
    const maxMessageBytes = config.maxPageBytes * 2 + 1024 * 1024;
    const large = [
      { name: 'max.message.bytes', value: String(maxMessageBytes) },
      { name: 'segment.bytes', value: String(Math.max(64 * 1024 * 1024, 2 * maxMessageBytes)) },
    ];
    // The changelog gets ONE partition: it is the log of one unsharded index,
    // and replay in decision order keeps FIFO eviction in decision order.
    const wanted = [
      { topic: config.pagesTopic, configEntries: large },
      { topic: config.novelTopic, configEntries: large },
      { topic: config.duplicateTopic, configEntries: [] as { name: string; value: string }[] },
      { topic: config.deadLetterTopic, configEntries: large },
      { topic: config.fingerprintsTopic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
    ].filter((t) => !existing.has(t.topic));
    if (wanted.length === 0) return;
    await admin.createTopics({
      waitForLeaders: true,
      topics: wanted.map((t) => ({
        topic: t.topic,
        numPartitions: t.topic === config.fingerprintsTopic ? 1 : config.topicPartitions,
        replicationFactor: config.replicationFactor,
        configEntries: t.configEntries,
      })),
    });
    logger.info('created topics', { topics: wanted.map((t) => t.topic) });
  } catch (error) {
    throw new DedupError('KAFKA', `creating topics failed: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
