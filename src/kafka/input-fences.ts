import type { Admin, Kafka } from 'kafkajs';
import { createPartitionFences, type PartitionFences } from '../consumers/partition-fences.js';
import { createVerdictProducer, type VerdictProducer } from './verdict-producer.js';

export interface InputFencesOptions {
  readonly groupId: string;
  readonly pagesTopic: string;
  /** The output topics' max.message.bytes (verdict-producer.ts). */
  readonly maxRecordBytes?: ReadonlyMap<string, number>;
}

/**
 * The fences of the modes that commit each input partition through a
 * producer of its own (sharded and routed): the partition's transactional id
 * is `<group>-<pages topic>-<partition>`, so opening it fences the
 * partition's previous owner, and the group's committed offset is read after
 * that (partition-fences.ts says why in that order). `close` also closes the
 * admin client that reads the offsets.
 */
export function createInputFences(kafka: Kafka, options: InputFencesOptions): PartitionFences<VerdictProducer> {
  let admin: Admin | null = null;
  async function committedOffset(partition: number): Promise<bigint> {
    if (!admin) {
      const created = kafka.admin();
      await created.connect();
      admin = created;
    }
    const [topic] = await admin.fetchOffsets({ groupId: options.groupId, topics: [options.pagesTopic] });
    const offset = topic?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
    return offset.startsWith('-') ? 0n : BigInt(offset);
  }
  const fences = createPartitionFences<VerdictProducer>({
    open: async (partition) => {
      const created = createVerdictProducer(kafka, `${options.groupId}-${options.pagesTopic}-${partition}`, options.maxRecordBytes);
      await created.connect();
      return created;
    },
    committed: committedOffset,
    close: (producer) => producer.disconnect(),
  });
  return {
    assigned: (partitions) => fences.assigned(partitions),
    start: (partition) => fences.start(partition),
    fenced: (lease) => fences.fenced(lease),
    async close() {
      await fences.close();
      await admin?.disconnect().catch(() => undefined);
    },
  };
}
