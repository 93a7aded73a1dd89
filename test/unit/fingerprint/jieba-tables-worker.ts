/**
 * A worker given jieba tables in its workerData, as the pools' workers are: it takes them
 * (useJiebaTables), cuts a text with the segmenter it then loads, marks the tables' unused weight
 * slot so the sender can see the memory is the same, and posts the words back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadJiebaSegmenter, useJiebaTables, type JiebaTables } from '../../../src/fingerprint/cjk-segmenter.js';

const { tables, text } = workerData as { tables: JiebaTables; text: string };
useJiebaTables(tables);
const segmenter = await loadJiebaSegmenter();
// weights[0] is never read (index 0 means "no word ends here").
tables.weights[0] = 42;
parentPort?.postMessage({ words: segmenter.cutString(text) });
