/**
 * Worker-thread side of fingerprint-pool.ts: one Fingerprinter per thread,
 * a chunk's pages in one transferred buffer (page-wire.ts), packed results
 * out in one transferred Uint32Array (result-codec.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { useJiebaTables, type JiebaTables } from './cjk-segmenter.js';
import { createFingerprinter, type FeatureOptions } from './fingerprinter.js';
import { decodePage } from './page-wire.js';
import { WORDS_PER_RESULT, encodeResult } from './result-codec.js';

export interface WorkerRequest {
  id: number;
  /** The chunk's pages back to back (page-wire.ts encodePages), transferred. */
  bytes: ArrayBuffer;
  ends: Uint32Array;
  flags: Uint8Array;
}

export type WorkerReply = { ready: true } | { id: number; results: Uint32Array };

export interface FingerprintWorkerData {
  readonly features: Partial<FeatureOptions>;
  /** The pool's jieba tables (shared memory), when the features segment Chinese with jieba. */
  readonly jieba: JiebaTables | null;
}

const port = parentPort;
if (port !== null) {
  const data = workerData as FingerprintWorkerData;
  if (data.jieba !== null) useJiebaTables(data.jieba);
  const fp = await createFingerprinter(data.features);
  port.on('message', (req: WorkerRequest) => {
    const bytes = Buffer.from(req.bytes);
    const count = req.ends.length;
    const results = new Uint32Array(count * WORDS_PER_RESULT);
    for (let j = 0; j < count; j++) encodeResult(fp.fingerprint(decodePage(bytes, req.ends, req.flags, j)), results, j);
    port.postMessage({ id: req.id, results } satisfies WorkerReply, [results.buffer]);
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
}
