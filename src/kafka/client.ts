/**
 * The narrow module that builds kafkajs clients (TLS, SASL) and creates the
 * product's topics, from the narrow options below (the start-up passes its
 * validated config, which has them all). kafkajs 2.2.4 is in maintenance: everything
 * else talks to Kafka through the consumer and producer modules, never to
 * kafkajs directly, so the client can be swapped in one place.
 */
import { readFileSync } from 'node:fs';
import { Kafka, type Admin, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { DedupError } from '../errors.js';
import { kafkaLogCreator, type Logger } from '../logger.js';
import { useFastCrc32cInKafkajs } from './kafkajs-crc32c.js';
import { stopIdleRequestQueueLoop } from './request-queue-idle.js';

/**
 * The retry policy of every idempotent producer: the transactional verdict
 * producers, the sharded log appender and the demo crawler. A send is retried
 * until it succeeds or fails for good (a non-retriable error, such as a
 * fenced epoch or a record too large). The broker drops a retried batch it
 * already has by its sequence number, so retries neither double nor reorder
 * records. With a retry count below this, kafkajs warns "Limiting retries for
 * the idempotent producer may invalidate EoS guarantees" at every start.
 * Nothing waits forever on a broker that answers: a transaction open longer
 * than its timeout is aborted by the coordinator, and the next send fails as
 * fenced. While the broker does not answer, /readyz is 503. The pauses stay
 * those of the client (20 ms doubling to 5 s).
 */
export const IDEMPOTENT_PRODUCER_RETRY = Object.freeze({ retries: Number.MAX_SAFE_INTEGER });

/** How to reach and authenticate to the brokers. */
export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly instanceId: string;
  readonly kafkaSsl: boolean;
  readonly kafkaSslCaFile: string;
  readonly kafkaSaslMechanism: 'none' | 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly kafkaSaslUsername: string;
  readonly kafkaSaslPassword: string;
}

/** The product's topics and how to create them; the sharded ones only count in mode 'sharded'. */
export interface TopicLayout {
  readonly mode: 'single' | 'sharded' | 'routed';
  readonly pagesTopic: string;
  readonly novelTopic: string;
  readonly duplicateTopic: string;
  readonly deadLetterTopic: string;
  readonly fingerprintsTopic: string;
  readonly sequenceTopic: string;
  readonly answersTopic: string;
  readonly standbyTopic: string;
  readonly indexTopic: string;
  readonly orderTopic: string;
  readonly repliesTopic: string;
  readonly idsTopic: string;
  readonly indexPartitions: number;
  readonly shards: number;
  readonly standbyReplicas: number;
  readonly topicPartitions: number;
  readonly replicationFactor: number;
  readonly maxPageBytes: number;
}

/** Unique per instance, so a group member can be recognised as this instance's predecessor. */
export function kafkaClientId(config: Pick<KafkaClientOptions, 'clientId' | 'instanceId'>): string {
  return `${config.clientId}-${config.instanceId}`;
}

/** Whether createKafka said that kafkajs's own CRC-32C stays in use (once per process). */
let crc32cWarned = false;

export function createKafka(config: KafkaClientOptions, logger: Logger): Kafka {
  // Every connection of kafkajs 2.2.4 otherwise wakes the event loop every millisecond while idle.
  stopIdleRequestQueueLoop();
  // kafkajs 2.2.4 otherwise checksums every record batch it produces one byte at a time.
  if (!useFastCrc32cInKafkajs() && !crc32cWarned) {
    crc32cWarned = true;
    logger.warn('kafkajs checksums record batches with its own bytewise CRC-32C: not kafkajs 2.2.4, or its record batch encoder loaded before the first client');
  }
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
export async function ensureTopics(kafka: Kafka, config: TopicLayout, logger: Logger): Promise<void> {
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
    // Every output topic takes the largest record the pipeline writes: a
    // verdict is bounded by the page's fields (src/wire/crawled-page.ts), a
    // novel verdict carries the page, a dead letter its original.
    // Single mode: the changelog gets ONE partition (the log of one index;
    // replay in decision order keeps FIFO eviction in decision order).
    // Sharded mode: one changelog partition per shard, and the two internal
    // one-partition logs (the sequence orders every page; the answers carry
    // the shards' hits and watermarks), kept for a day: a shard restored from
    // its changelog re-reads the sequence only from its last recorded page.
    const internal = [
      { name: 'max.message.bytes', value: String(8 * 1024 * 1024) },
      { name: 'retention.ms', value: String(24 * 3600 * 1000) },
    ];
    const sharded = config.mode === 'sharded';
    const wanted = [
      { topic: config.pagesTopic, partitions: config.topicPartitions, configEntries: large },
      { topic: config.novelTopic, partitions: config.topicPartitions, configEntries: large },
      { topic: config.duplicateTopic, partitions: config.topicPartitions, configEntries: large },
      { topic: config.deadLetterTopic, partitions: config.topicPartitions, configEntries: large },
      { topic: config.fingerprintsTopic, partitions: sharded ? config.shards : 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
      ...(sharded
        ? [
            { topic: config.sequenceTopic, partitions: 1, configEntries: internal },
            { topic: config.answersTopic, partitions: 1, configEntries: internal },
            ...(config.standbyReplicas > 0 ? [{ topic: config.standbyTopic, partitions: config.shards, configEntries: [] as { name: string; value: string }[] }] : []),
          ]
        : []),
    ].filter((t) => !existing.has(t.topic));
    if (config.mode === 'routed') {
      // The routed index's logs are its state (with the order log they rebuild every index
      // partition), so they are kept, not expired. Replies and the id store are co-partitioned
      // with the input, whatever partition count the input topic was created with.
      const inputPartitions = existing.has(config.pagesTopic)
        ? ((await admin.fetchTopicMetadata({ topics: [config.pagesTopic] })).topics[0]?.partitions.length ?? config.topicPartitions)
        : config.topicPartitions;
      const kept = [
        { name: 'max.message.bytes', value: String(8 * 1024 * 1024) },
        { name: 'retention.ms', value: '-1' },
      ];
      wanted.push(
        ...[
          { topic: config.indexTopic, partitions: config.indexPartitions, configEntries: kept },
          { topic: config.orderTopic, partitions: 1, configEntries: kept },
          { topic: config.repliesTopic, partitions: inputPartitions, configEntries: internal },
          { topic: config.idsTopic, partitions: inputPartitions, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'max.message.bytes', value: String(8 * 1024 * 1024) }] },
          ...(config.standbyReplicas > 0 ? [{ topic: config.standbyTopic, partitions: config.indexPartitions, configEntries: [] as { name: string; value: string }[] }] : []),
        ].filter((t) => !existing.has(t.topic)),
      );
    }
    if (wanted.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: wanted.map((t) => ({
        topic: t.topic,
        numPartitions: t.partitions,
        replicationFactor: config.replicationFactor,
        configEntries: t.configEntries,
      })),
    });
    logger.info('created topics', { topics: wanted.map((t) => t.topic) });
    }
    if (sharded) await checkShardTopics(admin, config);
    if (config.mode === 'routed') await checkRoutedTopics(admin, config);
  } catch (error) {
    if (error instanceof DedupError) throw error;
    throw new DedupError('KAFKA', `creating topics failed: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Sharded mode needs the changelog's partitions to be the shards, and one-partition internal logs. */
async function checkShardTopics(admin: Admin, config: TopicLayout): Promise<void> {
  const names = [config.fingerprintsTopic, config.sequenceTopic, config.answersTopic, ...(config.standbyReplicas > 0 ? [config.standbyTopic] : [])];
  const { topics } = await admin.fetchTopicMetadata({ topics: names });
  const partitions = new Map(topics.map((t) => [t.name, t.partitions.length]));
  const problems: string[] = [];
  if (partitions.get(config.fingerprintsTopic) !== config.shards) {
    problems.push(`${config.fingerprintsTopic} has ${partitions.get(config.fingerprintsTopic)} partitions but shards=${config.shards}: its partitions are the shards`);
  }
  if (config.standbyReplicas > 0 && partitions.get(config.standbyTopic) !== config.shards) {
    problems.push(`${config.standbyTopic} has ${partitions.get(config.standbyTopic)} partitions but shards=${config.shards}: its partitions name the standby copies`);
  }
  for (const topic of [config.sequenceTopic, config.answersTopic]) {
    if (partitions.get(topic) !== 1) problems.push(`${topic} has ${partitions.get(topic)} partitions; it must have exactly 1 (its offsets are the global order)`);
  }
  if (problems.length > 0) throw new DedupError('CONFIG_INVALID', problems.join('; '));
}

/** Routed mode: the index topic's partitions are the routing's, the order log has one, replies and ids follow the input. */
async function checkRoutedTopics(admin: Admin, config: TopicLayout): Promise<void> {
  const names = [config.pagesTopic, config.indexTopic, config.orderTopic, config.repliesTopic, config.idsTopic, ...(config.standbyReplicas > 0 ? [config.standbyTopic] : [])];
  const { topics } = await admin.fetchTopicMetadata({ topics: names });
  const partitions = new Map(topics.map((t) => [t.name, t.partitions.length]));
  const problems: string[] = [];
  if (partitions.get(config.indexTopic) !== config.indexPartitions) {
    problems.push(`${config.indexTopic} has ${partitions.get(config.indexTopic)} partitions but indexPartitions=${config.indexPartitions}: routing depends on it`);
  }
  if (config.standbyReplicas > 0 && partitions.get(config.standbyTopic) !== config.indexPartitions) {
    problems.push(`${config.standbyTopic} has ${partitions.get(config.standbyTopic)} partitions but indexPartitions=${config.indexPartitions}: its partitions name the standby copies`);
  }
  if (partitions.get(config.orderTopic) !== 1) problems.push(`${config.orderTopic} has ${partitions.get(config.orderTopic)} partitions; it must have exactly 1 (its offsets are the global order)`);
  for (const topic of [config.repliesTopic, config.idsTopic]) {
    if (partitions.get(topic) !== partitions.get(config.pagesTopic)) problems.push(`${topic} has ${partitions.get(topic)} partitions but ${config.pagesTopic} has ${partitions.get(config.pagesTopic)}: they must match (co-partitioned)`);
  }
  if (problems.length > 0) throw new DedupError('CONFIG_INVALID', problems.join('; '));
}
