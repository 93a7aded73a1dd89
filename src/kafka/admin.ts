/**
 * Admin look-ups: a topic's start and end offsets, the cluster's id, the
 * topics' record size limits. Each opens an admin client for one round trip
 * and closes it.
 */
import kafkajs, { type Kafka } from 'kafkajs';
import { DedupError } from '../errors.js';

/** Per partition, the first offset still held ('low') or the next offset to be written ('high'). */
async function topicOffsets(kafka: Kafka, topic: string, end: 'low' | 'high'): Promise<Record<string, string>> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topic);
    return Object.fromEntries(offsets.map((o) => [String(o.partition), o[end]]));
  } catch (error) {
    throw new DedupError('KAFKA', `reading ${end === 'high' ? 'end' : 'start'} offsets of ${topic} failed: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export function endOffsets(kafka: Kafka, topic: string): Promise<Record<string, string>> {
  return topicOffsets(kafka, topic, 'high');
}

/** The first offset each partition still holds (records before it were deleted by retention). */
export function startOffsets(kafka: Kafka, topic: string): Promise<Record<string, string>> {
  return topicOffsets(kafka, topic, 'low');
}

export async function clusterId(kafka: Kafka): Promise<string> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).clusterId;
  } catch (error) {
    throw new DedupError('KAFKA', `describing the Kafka cluster failed: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * The largest record value each topic accepts (max.message.bytes), read once
 * at start-up so oversized verdicts are dead-lettered rather than refused in
 * a transaction. Topics whose config cannot be read are left out (unchecked).
 */
export async function topicRecordLimits(kafka: Kafka, topics: readonly string[]): Promise<Map<string, number>> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: topics.map((name) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name, configNames: ['max.message.bytes'] })),
    });
    const limits = new Map<string, number>();
    for (const r of resources) {
      const entry = r.configEntries.find((e) => e.configName === 'max.message.bytes');
      if (r.errorCode === 0 && entry && Number(entry.configValue) > 0) limits.set(r.resourceName, Number(entry.configValue));
    }
    return limits;
  } catch (error) {
    throw new DedupError('KAFKA', `reading the output topics' max.message.bytes failed: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
