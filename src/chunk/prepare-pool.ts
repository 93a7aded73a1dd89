/**
 * Worker threads that take a chunk's record values and give back what the
 * decide stage needs: per record either a page's id, url, fetchedAt,
 * fingerprint and its novel verdict already encoded, or the fault that makes
 * it a dead letter. The consuming thread keeps only Kafka I/O, the registry
 * look-ups and the decisions; the page bodies are decoded, fingerprinted and
 * re-encoded where it does not block the event loop.
 *
 * Bytes go by transfer, not by structured clone of strings: the values of a
 * task are copied back to back into a buffer of its own, which is moved to
 * the worker (a kafkajs value is a view into the whole fetch response, which
 * must not be moved); fingerprints and novel values come back the same way.
 *
 * The schema registry stays on this thread, so a registry outage still
 * throws out of prepare as a retriable error (the chunk is retried, nothing
 * is dead-lettered): each Avro schema id is resolved here (cached) and its
 * schema sent once to each worker. Records that need no work or cannot be
 * handled there (no value, over the size limit, a short Avro header, a
 * schema id that is not Avro) are left to the calling thread ('here').
 *
 * A worker that dies rejects every chunk in flight with WORKER_FAILED and
 * closes the pool; the process restarts from durable state.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DedupError, ERROR_CODES, type ErrorCode } from '../errors.js';
import { jiebaTables, validateFeatureOptions, type FeatureOptions, type FingerprintResult } from '../fingerprint/index.js';
import { decodeResult } from '../fingerprint/result-codec.js';
import { readSchema, type RecordCodec } from '../wire/record-codec.js';
import type { PreparedMeta, PrepareFault, PrepareReply, PrepareRequest, PrepareWorkerData, PrepareWorkerMessage } from './prepare-worker.js';

export interface PreparePoolOptions {
  readonly codec: RecordCodec;
  /** Worker threads; default: os.availableParallelism(). */
  readonly threads?: number;
  /** Feature options, as for createFingerprinter. */
  readonly features?: Partial<FeatureOptions>;
  /** Target bytes of record values per task handed to a worker (default 512 KiB). */
  readonly taskBytes?: number;
  /** The worker module (default prepare-worker.js beside this file). */
  readonly workerUrl?: URL;
}

export type PoolOutcome =
  | { readonly kind: 'page'; readonly meta: PreparedMeta; readonly result: FingerprintResult; readonly novelValue: Buffer | null }
  | { readonly kind: 'fault'; readonly error: Error }
  /** Decode this one on the calling thread, as without a pool. */
  | { readonly kind: 'here' };

export interface PreparePool {
  readonly threads: number;
  readonly options: Readonly<FeatureOptions>;
  /**
   * One outcome per value, in order. Throws the registry's retriable errors
   * and WORKER_FAILED; a record's own faults are outcomes, never throws.
   */
  prepare(values: readonly (Buffer | null)[], fallbackFetchedAt: readonly number[]): Promise<PoolOutcome[]>;
  close(): Promise<void>;
}

interface Task {
  readonly indices: number[];
  readonly schemaIds: Set<number>;
  readonly values: Uint8Array;
  readonly ends: Uint32Array;
  readonly fallbackFetchedAt: Float64Array;
  resolve(reply: PrepareReply): void;
  reject(error: unknown): void;
}

interface Slot {
  readonly worker: Worker;
  /** Schema ids this worker has been sent. */
  readonly schemas: Set<number>;
  /** Tasks posted and not answered yet, oldest first (a worker answers in order), with their request ids. */
  readonly inFlight: { readonly task: Task; readonly id: number }[];
}

/**
 * Tasks queued in a worker at once: one it works on, one waiting, so it never waits for this
 * thread to take its reply and post the next (fingerprint-pool.ts measured that bubble).
 */
const IN_FLIGHT_PER_WORKER = 2;

const AVRO_MAGIC = 0;
const AVRO_HEADER = 5;

function toError(fault: PrepareFault): Error {
  if (fault.code !== null && Object.hasOwn(ERROR_CODES, fault.code)) return new DedupError(fault.code as ErrorCode, fault.message);
  return new Error(fault.message);
}

export async function createPreparePool(options: PreparePoolOptions): Promise<PreparePool> {
  const offload = options.codec.offload;
  if (offload === undefined) throw new DedupError('CONFIG_INVALID', 'the prepare pool needs a codec from createRecordCodec');
  const features = validateFeatureOptions(options.features);
  const threads = Math.max(1, Math.floor(options.threads ?? availableParallelism()));
  const taskBytes = Math.max(1, options.taskBytes ?? 512 * 1024);
  const maxValueBytes = offload.maxPageBytes + 64 * 1024;
  const workerData: PrepareWorkerData = {
    features: { ...features },
    format: options.codec.format,
    maxPageBytes: offload.maxPageBytes,
    novelSchemaId: offload.novelSchemaId,
    novelSchema: readSchema('novel-page'),
    // The dictionary is read here once and its tables shared with every worker (not read by each).
    jieba: features.cjk === 'jieba' ? await jiebaTables() : null,
  };
  const url = options.workerUrl ?? new URL('./prepare-worker.js', import.meta.url);
  const slots: Slot[] = [];
  const queue: Task[] = [];
  /** Schema ids never change meaning in a registry: resolved once, kept. */
  const writerSchemas = new Map<number, string | null>();
  let nextTaskId = 1;
  let failure: DedupError | undefined;

  const fail = (error: unknown): void => {
    failure ??= new DedupError('WORKER_FAILED', `prepare worker failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    for (const s of slots) for (const { task } of s.inFlight.splice(0)) task.reject(failure);
    for (const t of queue.splice(0)) t.reject(failure);
    for (const s of slots) void s.worker.terminate();
  };

  const pump = (): void => {
    for (let depth = 0; depth < IN_FLIGHT_PER_WORKER && queue.length > 0; depth++) {
      for (const slot of slots) {
        if (slot.inFlight.length > depth || queue.length === 0) continue;
        const task = queue.shift()!;
        const schemas: [number, string][] = [];
        for (const id of task.schemaIds) if (!slot.schemas.has(id)) schemas.push([id, writerSchemas.get(id)!]);
        const request: PrepareRequest = { id: nextTaskId++, values: task.values.buffer as ArrayBuffer, ends: task.ends, fallbackFetchedAt: task.fallbackFetchedAt, schemas };
        try {
          slot.worker.postMessage(request, [task.values.buffer as ArrayBuffer, task.ends.buffer as ArrayBuffer, task.fallbackFetchedAt.buffer as ArrayBuffer]);
        } catch (error) {
          task.reject(error);
          continue;
        }
        for (const [id] of schemas) slot.schemas.add(id);
        slot.inFlight.push({ task, id: request.id });
      }
    }
  };

  await Promise.all(
    Array.from({ length: threads }, () => {
      const worker = new Worker(url, { workerData });
      const slot: Slot = { worker, schemas: new Set(), inFlight: [] };
      slots.push(slot);
      return new Promise<void>((resolve, reject) => {
        worker.on('message', (msg: PrepareWorkerMessage) => {
          if ('ready' in msg) {
            resolve();
            return;
          }
          const sent = slot.inFlight.shift();
          if (sent !== undefined && msg.id === sent.id) sent.task.resolve(msg);
          pump();
        });
        worker.on('error', (error) => {
          reject(error);
          fail(error);
        });
        worker.on('exit', (code) => {
          const error = new Error(`prepare worker exited with code ${code}`);
          reject(error);
          if (failure === undefined) fail(error);
        });
      });
    }),
  ).catch(async (error: unknown) => {
    await Promise.all(slots.map((s) => s.worker.terminate()));
    throw failure ?? error;
  });

  /** Resolves the Avro schema ids of a chunk; a retriable registry error propagates, an unknown id is that record's fault. */
  async function resolveSchemas(ids: Set<number>): Promise<Map<number, DedupError>> {
    const unknown = new Map<number, DedupError>();
    await Promise.all(
      [...ids].filter((id) => !writerSchemas.has(id)).map(async (id) => {
        try {
          writerSchemas.set(id, await offload!.avroWriterSchema(id));
        } catch (error) {
          if (error instanceof DedupError && !error.retriable) unknown.set(id, error);
          else throw error;
        }
      }),
    );
    return unknown;
  }

  const runTask = (task: Omit<Task, 'resolve' | 'reject'>): Promise<PrepareReply> =>
    new Promise<PrepareReply>((resolve, reject) => {
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      queue.push({ ...task, resolve, reject });
      pump();
    });

  return {
    threads,
    options: features,
    async prepare(values, fallbackFetchedAt) {
      if (failure !== undefined) throw failure;
      const outcomes: PoolOutcome[] = new Array(values.length);
      const avroIds = new Set<number>();
      for (const value of values) {
        if (value !== null && value.length >= AVRO_HEADER && value.length <= maxValueBytes && value[0] === AVRO_MAGIC) avroIds.add(value.readInt32BE(1));
      }
      const unknown = avroIds.size > 0 ? await resolveSchemas(avroIds) : new Map<number, DedupError>();

      // Which records go to a worker, cut into tasks of about taskBytes.
      const groups: { indices: number[]; bytes: number }[] = [];
      let group = { indices: [] as number[], bytes: 0 };
      for (let i = 0; i < values.length; i++) {
        const value = values[i]!;
        if (value === null || value.length === 0 || value.length > maxValueBytes || (value[0] === AVRO_MAGIC && value.length < AVRO_HEADER)) {
          outcomes[i] = { kind: 'here' };
          continue;
        }
        if (value[0] === AVRO_MAGIC) {
          const id = value.readInt32BE(1);
          const fault = unknown.get(id);
          if (fault !== undefined) {
            outcomes[i] = { kind: 'fault', error: new DedupError(fault.code, fault.message, { cause: fault.cause }) };
            continue;
          }
          if (writerSchemas.get(id) === null) {
            outcomes[i] = { kind: 'here' };
            continue;
          }
        }
        group.indices.push(i);
        group.bytes += value.length;
        if (group.bytes >= taskBytes) {
          groups.push(group);
          group = { indices: [], bytes: 0 };
        }
      }
      if (group.indices.length > 0) groups.push(group);
      // Every thread gets work on a small chunk.
      while (groups.length < threads && groups.some((g) => g.indices.length > 1)) {
        const k = groups.reduce((best, g, j) => (g.indices.length > groups[best]!.indices.length ? j : best), 0);
        const { indices } = groups[k]!;
        const half = indices.length >> 1;
        groups.splice(k, 1, { indices: indices.slice(0, half), bytes: 0 }, { indices: indices.slice(half), bytes: 0 });
      }

      const replies = await Promise.all(
        groups.map(({ indices }) => {
          let total = 0;
          for (const i of indices) total += values[i]!.length;
          // Copies into a buffer of the task's own: the only memory that may be transferred.
          const bytes = new Uint8Array(total);
          const ends = new Uint32Array(indices.length);
          const fallbacks = new Float64Array(indices.length);
          const schemaIds = new Set<number>();
          let at = 0;
          indices.forEach((i, j) => {
            const value = values[i]!;
            bytes.set(value, at);
            at += value.length;
            ends[j] = at;
            fallbacks[j] = fallbackFetchedAt[i]!;
            if (value[0] === AVRO_MAGIC) schemaIds.add(value.readInt32BE(1));
          });
          return runTask({ indices, schemaIds, values: bytes, ends, fallbackFetchedAt: fallbacks });
        }),
      );

      replies.forEach((reply, k) => {
        groups[k]!.indices.forEach((i, j) => {
          const outcome = reply.outcomes[j]!;
          if ('message' in outcome) {
            outcomes[i] = { kind: 'fault', error: toError(outcome) };
            return;
          }
          const length = reply.novelSpans[2 * j + 1]!;
          const novelValue = length < 0 ? null : Buffer.from(reply.novel, reply.novelSpans[2 * j]!, length);
          outcomes[i] = { kind: 'page', meta: outcome, result: decodeResult(reply.results, j), novelValue };
        });
      });
      return outcomes;
    },
    async close() {
      failure ??= new DedupError('WORKER_FAILED', 'prepare pool is closed');
      for (const t of queue.splice(0)) t.reject(failure);
      for (const s of slots) for (const { task } of s.inFlight.splice(0)) task.reject(failure);
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
