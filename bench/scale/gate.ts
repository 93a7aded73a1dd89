/**
 * An input topic whose pages are already in the log but not yet readable:
 * they are written in one transaction left open, so consumers that read
 * committed records only (the pipeline's do) see none of them until the
 * driver commits it. Instances of a group start at different moments; the
 * gate opens once every one of them is ready, so none decides pages alone
 * before the others have joined, and the assignment does not change while
 * the rate is measured. The commit itself is one marker per partition.
 */
import type { Kafka } from 'kafkajs';
import type { EncodedPages } from '../pipeline/load.js';

export interface GatedInput {
  /** Makes every page visible at once to read_committed consumers. */
  open(): Promise<void>;
  /** Aborts the transaction if it is still open (on failure). */
  close(): Promise<void>;
}

export async function preloadGated(kafka: Kafka, topic: string, pages: EncodedPages, batchBytes = 512 * 1024): Promise<GatedInput> {
  const producer = kafka.producer({
    transactionalId: `bench-scale-gate-${topic}`,
    idempotent: true,
    maxInFlightRequests: 1,
    // The instances' start-up happens while the transaction is open.
    transactionTimeout: 600_000,
  });
  await producer.connect();
  const transaction = await producer.transaction();
  let done = false;
  try {
    let batch: { key: string; value: Buffer }[] = [];
    let bytes = 0;
    for (let i = 0; i < pages.values.length; i++) {
      batch.push({ key: pages.keys[i]!, value: pages.values[i]! });
      bytes += pages.values[i]!.length;
      if (bytes >= batchBytes || i === pages.values.length - 1) {
        await transaction.send({ topic, acks: -1, messages: batch });
        batch = [];
        bytes = 0;
      }
    }
  } catch (error) {
    await transaction.abort().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    throw error;
  }
  return {
    async open() {
      if (done) return;
      done = true;
      try {
        await transaction.commit();
      } finally {
        await producer.disconnect().catch(() => undefined);
      }
    },
    async close() {
      if (done) return;
      done = true;
      await transaction.abort().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    },
  };
}
