/**
 * A small worker_threads pool of Fingerprinters with the same options, for a
 * process that should use all its cores (fingerprinting is CPU-bound).
 *
 * `fingerprintMany(pages)` splits a batch into chunks of similar total size,
 * hands each chunk to the next idle worker and resolves with results in input
 * order. Pages are structured-cloned into the workers (strings are copied
 * once); results come back as one transferred Uint32Array per chunk.
 *
 * Options are validated in the calling thread first, so bad options throw
 * DedupError(CONFIG_INVALID) from createFingerprintPool. A worker that dies
 * rejects the batches it holds with its error and the pool is closed.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { validateFeatureOptions, type FeatureOptions, type FingerprintResult, type PageContent } from './fingerprinter.js';
import type { WorkerReply, WorkerRequest } from './fingerprint-worker.js';
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
  fingerprintMany(pages: readonly PageContent[]): Promise<FingerprintResult[]>;
  close(): Promise<void>;
}

interface Task {
  id: number;
  pages: PageContent[];
  resolve(results: Uint32Array): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
}

function pageChars(p: PageContent): number {
  const s = typeof p?.html === 'string' ? p.html : typeof p?.text === 'string' ? p.text : '';
  return s.length;
}

export async function createFingerprintPool(options: FingerprintPoolOptions = {}): Promise<FingerprintPool> {
  const features = validateFeatureOptions(options.features);
  const threads = Math.max(1, Math.floor(options.threads ?? availableParallelism()));
  const chunkChars = Math.max(1, options.chunkChars ?? 512 * 1024);
  const url = new URL('./fingerprint-worker.js', import.meta.url);
  const slots: Slot[] = [];
  const queue: Task[] = [];
  let nextId = 1;
  let failure: unknown;

  const failAll = (error: unknown): void => {
    failure ??= error;
    for (const s of slots) {
      s.task?.reject(error);
      s.task = undefined;
    }
    for (const t of queue.splice(0)) t.reject(error);
    for (const s of slots) void s.worker.terminate();
  };

  const pump = (): void => {
    for (const s of slots) {
      if (s.task !== undefined || queue.length === 0) continue;
      const task = queue.shift()!;
      try {
        s.worker.postMessage({ id: task.id, pages: task.pages } satisfies WorkerRequest);
        s.task = task;
      } catch (err) {
        // A page that cannot be cloned (a function, a symbol...) fails its own batch only.
        task.reject(err);
      }
    }
  };

  await Promise.all(
    Array.from({ length: threads }, () => {
      const worker = new Worker(url, { workerData: { ...features } });
      const slot: Slot = { worker, task: undefined };
      slots.push(slot);
      return new Promise<void>((resolve, reject) => {
        worker.on('message', (msg: WorkerReply) => {
          if ('ready' in msg) {
            resolve();
            return;
          }
          const task = slot.task;
          slot.task = undefined;
          task?.resolve(msg.results);
          pump();
        });
        worker.on('error', (err) => {
          reject(err);
          failAll(err);
        });
        worker.on('exit', (code) => {
          if (code !== 0 || slot.task !== undefined) failAll(failure ?? new Error(`fingerprint worker exited with code ${code}`));
        });
      });
    }),
  );

  return {
    threads,
    options: features,
    async fingerprintMany(pages) {
      if (failure !== undefined) throw failure;
      const chunks: PageContent[][] = [];
      let current: PageContent[] = [];
      let chars = 0;
      for (const p of pages) {
        current.push(p);
        chars += pageChars(p);
        if (chars >= chunkChars) {
          chunks.push(current);
          current = [];
          chars = 0;
        }
      }
      if (current.length > 0) chunks.push(current);
      // Make sure every thread gets work on a small batch.
      while (chunks.length < threads && chunks.some((c) => c.length > 1)) {
        const i = chunks.reduce((best, c, k) => (c.length > chunks[best]!.length ? k : best), 0);
        const c = chunks[i]!;
        chunks.splice(i, 1, c.slice(0, c.length >> 1), c.slice(c.length >> 1));
      }
      const parts = await Promise.all(
        chunks.map(
          (chunk) =>
            new Promise<Uint32Array>((resolve, reject) => {
              queue.push({ id: nextId++, pages: chunk, resolve, reject });
              pump();
            }),
        ),
      );
      const out: FingerprintResult[] = [];
      parts.forEach((buf, k) => {
        for (let i = 0; i < chunks[k]!.length; i++) out.push(decodeResult(buf, i));
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
