/**
 * An output record as the chunk step makes it and the producers write it:
 * Kafka-free, so the step and the producers share it without importing each other.
 */

export interface OutputMessage {
  key: string | Buffer | null;
  /** Set only where the partition is chosen, not hashed from the key. */
  partition?: number;
  value: Buffer;
  headers?: Record<string, string>;
}

/** Record batch and record overhead kept free under a topic's max.message.bytes. */
export const RECORD_OVERHEAD_BYTES = 1024;

/**
 * Record header naming the fingerprint definition (feature options, the
 * fingerprinter's definition number, Unicode version) a changelog entry was
 * computed with. Fingerprints of different definitions are not comparable:
 * replay refuses to mix them.
 */
export const FINGERPRINT_VERSION_HEADER = 'dedup.fingerprint.version';
