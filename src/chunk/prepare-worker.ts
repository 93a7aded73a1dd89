/**
 * Worker-thread side of prepare-pool.ts: prepare-records.ts's work on each
 * chunk it is sent, the results and novel values sent back by transfer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createRecordPreparer, type PrepareReply, type PrepareRequest, type PrepareWorkerData } from './prepare-records.js';

export type { PreparedMeta, PrepareFault, PrepareReply, PrepareRequest, PrepareWorkerData } from './prepare-records.js';
export type PrepareWorkerMessage = { ready: true } | PrepareReply;

const port = parentPort;
if (port !== null) {
  const prepare = await createRecordPreparer(workerData as PrepareWorkerData);
  port.on('message', (req: PrepareRequest) => {
    const reply = prepare(req);
    port.postMessage(reply, [reply.results.buffer as ArrayBuffer, reply.novel, reply.novelSpans.buffer as ArrayBuffer]);
  });
  port.postMessage({ ready: true } satisfies PrepareWorkerMessage);
}
