/** A prepare worker that starts, then dies on its first task: the pool must fail the chunk and close. */
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', () => process.exit(3));
parentPort?.postMessage({ ready: true });
