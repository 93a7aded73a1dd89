/**
 * Tails the answers log and hands each waiting page its verdict once every
 * shard has answered (src/dedup/answer-join.ts). Every instance reads the
 * whole log (one partition of small records) from where it stood when the
 * instance started: the pages it waits for are appended after that, so their
 * answers come after it too.
 */
import type { Consumer, Kafka } from 'kafkajs';
import { errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { AnswerJoin, type Completion, type WatchedPage } from '../dedup/answer-join.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import { decodeAnswerRecord } from '../wire/shard-records.js';
import { endOffsets } from '../kafka/admin.js';

export interface AnswerTail {
  start(): Promise<void>;
  /** Calls `done` with each completion of the source record `key` (a verdict, or "ask again as of"), until forgotten or given a verdict. */
  expect(key: string, page: WatchedPage, done: (completion: Completion) => void): void;
  /** The source record's append was acknowledged at this sequence. */
  sequenced(key: string, sequence: number): void;
  /** Waits for the source record again, as a reprobe of its first appearance. */
  rewatch(key: string, page: WatchedPage): void;
  /** Stops waiting for a source record (its chunk was abandoned at a rebalance). */
  forget(key: string): void;
  readonly join: AnswerJoin;
  stop(): Promise<void>;
}

/** The answers log, how many shards answer on it, and who reads it (its own group per start). */
export interface AnswerTailOptions {
  readonly answersTopic: string;
  readonly shards: number;
  readonly groupId: string;
  readonly instanceId: string;
}

export function createAnswerTail(options: { kafka: Kafka; config: AnswerTailOptions; metrics: DedupMetrics; logger: Logger }): AnswerTail {
  const { kafka, config, metrics, logger } = options;
  const join = new AnswerJoin(config.shards);
  const waiters = new Map<string, (completion: Completion) => void>();
  const consumer: Consumer = kafka.consumer({
    // A group of its own per start: nothing is committed in it, and a group
    // of the same name would make a restarted instance wait for its dead
    // member's session to expire before it could read.
    groupId: `${config.groupId}-answers-${config.instanceId}-${process.pid}-${Date.now().toString(36)}`,
    readUncommitted: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });

  return {
    join,
    async start() {
      const start = (await endOffsets(kafka, config.answersTopic))['0'] ?? '0';
      await consumer.connect();
      await consumer.subscribe({ topics: [config.answersTopic], fromBeginning: false });
      await consumer.run({
        // Committed so that a rejoin of this tail's group (a coordinator that
        // restarted) resumes where it was: kafkajs then starts from the
        // committed offset, and without one from the end, skipping answers.
        autoCommit: true,
        eachBatch: async ({ batch, heartbeat }) => {
          for (const message of batch.messages) {
            try {
              join.apply(decodeAnswerRecord(message.value));
            } catch (error) {
              metrics.errors.inc({ code: errorCode(error) });
              logger.error('skipping an undecodable answer record', { offset: message.offset, error });
            }
          }
          for (const completion of join.drain()) {
            const done = waiters.get(completion.key);
            if (completion.verdict) waiters.delete(completion.key);
            done?.(completion);
          }
          await heartbeat();
        },
      });
      consumer.seek({ topic: config.answersTopic, partition: 0, offset: start });
    },
    expect(key, page, done) {
      waiters.set(key, done);
      join.watch(key, page);
    },
    sequenced(key, sequence) {
      join.sequenced(key, sequence);
    },
    rewatch(key, page) {
      join.rewatch(key, page);
    },
    forget(key) {
      waiters.delete(key);
      join.forget(key);
    },
    async stop() {
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
    },
  };
}
