/**
 * Worker-thread side of fingerprint-pool.ts: one Fingerprinter per thread,
 * batches in, packed results out (result-codec.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createFingerprinter, type FeatureOptions, type PageContent } from './fingerprinter.js';
import { WORDS_PER_RESULT, encodeResult } from './result-codec.js';

export interface WorkerRequest {
  id: number;
  pages: PageContent[];
}

export type WorkerReply = { ready: true } | { id: number; results: Uint32Array };

const port = parentPort;
if (port !== null) {
  const fp = await createFingerprinter(workerData as Partial<FeatureOptions>);
  port.on('message', (req: WorkerRequest) => {
    const results = new Uint32Array(req.pages.length * WORDS_PER_RESULT);
    for (let i = 0; i < req.pages.length; i++) encodeResult(fp.fingerprint(req.pages[i]!), results, i);
    port.postMessage({ id: req.id, results } satisfies WorkerReply, [results.buffer]);
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
}
