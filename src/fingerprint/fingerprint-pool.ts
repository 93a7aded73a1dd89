/**
 * A small worker_threads pool of Fingerprinters with the same options, for a
 * process that should use all its cores (fingerprinting is CPU-bound).
 *
 * `fingerprintMany(pages)` splits a batch into chunks of similar total size,
 * hands each chunk to a worker and resolves with results in input order.
 *
 * What a chunk costs the calling thread is what the pool costs at one thread
 * (bench/fingerprint/run.mjs measures it against in-thread work):
 * - One message per chunk each way, never one per page.
 * - Bytes in by transfer: the chunk's pages are written back to back into
 *   one ArrayBuffer of its own (page-wire.ts), one byte per character for a
 *   page with none above U+00FF, else UTF-16, so a page is copied once and
 *   arrives as the same text (lone surrogates included) in the same string
 *   representation. Structured cloning the strings serialised and copied
 *   every page on this thread and again in the worker. A page given as its
 *   bytes is copied as it is and decoded in the worker, so the decode leaves
 *   this thread too.
 * - Results out by transfer: one Uint32Array per chunk (result-codec.ts);
 *   each result's sketch is a view into it, not a copy.
 * - Two chunks in flight per worker: the next one is already queued in the
 *   worker when it finishes one, so it never waits for this thread's reply
 *   and dispatch.
 *
 * Options are validated in the calling thread first, so bad options throw
 * DedupError(CONFIG_INVALID) from createFingerprintPool. A worker that dies
 * rejects the batches it holds with its error and the pool is closed.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { jiebaTables } from './cjk-segmenter.js';
import { validateFeatureOptions, type FeatureOptions, type FingerprintResult } from './fingerprinter.js';
import type { FingerprintWorkerData, WorkerReply, WorkerRequest } from './fingerprint-worker.js';
import { encodePages, pageLength, type PoolPage } from './page-wire.js';

export type { PoolPage } from './page-wire.js';
import { decodeResult } from './result-codec.js';

export interface FingerprintPoolOptions {
  /** Worker threads; default: os.availableParallelism(). */
  threads?: number;
  /** Feature options, as for createFingerprinter. */
  features?: Partial<FeatureOptions>;
  /** Target characters of HTML/text per chunk handed to a worker (default 512 KiB). */
  chunkChars?: number;
}

export interface FingerprintPool {
  readonly threads: number;
  readonly options: Readonly<FeatureOptions>;
  /**
   * Results in input order. A page's html or text may be a string, or the page's bytes, which
   * the worker decodes as decodePageBytes does (as the wire layer decodes a body).
   */
  fingerprintMany(pages: readonly PoolPage[]): Promise<FingerprintResult[]>;
  close(): Promise<void>;
}

interface Task {
  readonly pages: readonly PoolPage[];
  readonly from: number;
  readonly to: number;
  resolve(results: Uint32Array): void;
  reject(error: unknown): void;
}

interface Slot {
  readonly worker: Worker;
  /** Chunks posted to the worker and not answered yet, oldest first (a worker answers in order). */
  readonly inFlight: Task[];
}

/** Chunks queued in a worker at once: one it works on, one waiting. */
const IN_FLIGHT_PER_WORKER = 2;

export async function createFingerprintPool(options: FingerprintPoolOptions = {}): Promise<FingerprintPool> {
  const features = validateFeatureOptions(options.features);
  const threads = Math.max(1, Math.floor(options.threads ?? availableParallelism()));
  const chunkChars = Math.max(1, options.chunkChars ?? 512 * 1024);
  const url = new URL('./fingerprint-worker.js', import.meta.url);
  // The dictionary is read here once and its tables shared with every worker (not read by each).
  const workerData: FingerprintWorkerData = { features: { ...features }, jieba: features.cjk === 'jieba' ? await jiebaTables() : null };
  const slots: Slot[] = [];
  const queue: Task[] = [];
  let nextId = 1;
  let failure: unknown;

  const failAll = (error: unknown): void => {
    failure ??= error;
    for (const s of slots) for (const t of s.inFlight.splice(0)) t.reject(error);
    for (const t of queue.splice(0)) t.reject(error);
    for (const s of slots) void s.worker.terminate();
  };

  /** Posts queued chunks to the workers with room, the least loaded first. */
  const pump = (): void => {
    for (let depth = 0; depth < IN_FLIGHT_PER_WORKER && queue.length > 0; depth++) {
      for (const s of slots) {
        if (s.inFlight.length > depth || queue.length === 0) continue;
        const task = queue.shift()!;
        try {
          const { bytes, ends, flags } = encodePages(task.pages, task.from, task.to);
          const request: WorkerRequest = { id: nextId++, bytes: bytes.buffer as ArrayBuffer, ends, flags };
          s.worker.postMessage(request, [request.bytes, ends.buffer as ArrayBuffer, flags.buffer as ArrayBuffer]);
        } catch (error) {
          // A page whose html or text getter throws fails its own batch only.
          task.reject(error);
          continue;
        }
        s.inFlight.push(task);
      }
    }
  };

  await Promise.all(
    Array.from({ length: threads }, () => {
      const worker = new Worker(url, { workerData });
      const slot: Slot = { worker, inFlight: [] };
      slots.push(slot);
      return new Promise<void>((resolve, reject) => {
        worker.on('message', (msg: WorkerReply) => {
          if ('ready' in msg) {
            resolve();
            return;
          }
          slot.inFlight.shift()?.resolve(msg.results);
          pump();
        });
        worker.on('error', (err) => {
          reject(err);
          failAll(err);
        });
        worker.on('exit', (code) => {
          if (code !== 0 || slot.inFlight.length > 0) failAll(failure ?? new Error(`fingerprint worker exited with code ${code}`));
        });
      });
    }),
  );

  return {
    threads,
    options: features,
    async fingerprintMany(pages) {
      if (failure !== undefined) throw failure;
      // Chunk bounds [from, to) over pages, of about chunkChars each.
      const bounds: number[] = [0];
      let chars = 0;
      for (let i = 0; i < pages.length; i++) {
        chars += pageLength(pages[i]);
        if (chars >= chunkChars && i + 1 < pages.length) {
          bounds.push(i + 1);
          chars = 0;
        }
      }
      if (pages.length > 0) bounds.push(pages.length);
      // Make sure every thread gets work on a small batch: halve the chunk with the most pages.
      while (bounds.length - 1 < threads) {
        let best = -1;
        for (let k = 0; k + 1 < bounds.length; k++) if (bounds[k + 1]! - bounds[k]! > 1 && (best < 0 || bounds[k + 1]! - bounds[k]! > bounds[best + 1]! - bounds[best]!)) best = k;
        if (best < 0) break;
        bounds.splice(best + 1, 0, bounds[best]! + ((bounds[best + 1]! - bounds[best]!) >> 1));
      }
      const parts = await Promise.all(
        bounds.slice(1).map(
          (to, k) =>
            new Promise<Uint32Array>((resolve, reject) => {
              queue.push({ pages, from: bounds[k]!, to, resolve, reject });
              pump();
            }),
        ),
      );
      const out = new Array<FingerprintResult>(pages.length);
      parts.forEach((buf, k) => {
        const from = bounds[k]!;
        for (let i = from; i < bounds[k + 1]!; i++) out[i] = decodeResult(buf, i - from);
      });
      return out;
    },
    async close() {
      failure ??= new Error('fingerprint pool is closed');
      for (const t of queue.splice(0)) t.reject(failure);
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
