import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, kafkaLogCreator } from '../../../src/logger.js';

function levelsFor(entries: { level: number; message: string; fields?: Record<string, unknown> }[]): string[] {
  const lines: string[] = [];
  const logger = createLogger('debug', {}, (line) => lines.push(line));
  const log = kafkaLogCreator(logger)();
  for (const e of entries) log({ namespace: 'Connection', level: e.level, label: 'ERROR', log: { message: e.message, timestamp: 'x', logger: 'kafkajs', ...e.fields } });
  return lines.map((l) => (JSON.parse(l) as { level: string }).level);
}

test('kafkajs CONCURRENT_TRANSACTIONS responses (retried in normal operation) are debug, other errors stay errors', () => {
  const concurrent = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
  assert.deepEqual(
    levelsFor([
      { level: 1, message: 'Response AddPartitionsToTxn(key: 24, version: 1)', fields: { error: concurrent, correlationId: 7 } },
      { level: 1, message: 'Response AddOffsetsToTxn(key: 25, version: 1)', fields: { error: concurrent } },
      { level: 1, message: 'Response Produce(key: 0, version: 7)', fields: { error: 'The request included a message larger than the max message size the server will accept' } },
      { level: 1, message: 'Failed to send messages', fields: { retryCount: 2, retryTime: 100 } },
    ]),
    ['debug', 'debug', 'error', 'warn'],
  );
});
