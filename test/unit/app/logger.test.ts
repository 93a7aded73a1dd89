import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createLogger, kafkaLogCreator, kafkaLogErrorType, ROUTINE_KAFKA_ANSWERS } from '../../../src/logger.js';

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

test('kafkajs routine answers (CONCURRENT_TRANSACTIONS retried, REBALANCE_IN_PROGRESS rejoined) never log above info, as kafkajs words them', () => {
  const concurrent = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
  const rebalancing = 'The group is rebalancing, so a rejoin is needed';
  // The lines a fault-free run logged, as kafkajs 2.2.4 emits them.
  assert.deepEqual(
    levelsFor([
      { level: 1, message: `Failed to send messages: ${concurrent}`, fields: { retryCount: 0, retryTime: 22 } },
      { level: 1, message: 'Response Heartbeat(key: 12, version: 3)', fields: { broker: '127.0.0.1:1', clientId: 'c', error: rebalancing, correlationId: 10, size: 10 } },
      { level: 2, message: 'The group is rebalancing, re-joining', fields: { groupId: 'g', memberId: 'm', error: rebalancing } },
      { level: 1, message: 'Response OffsetCommit(key: 8, version: 5)', fields: { error: rebalancing } },
    ]),
    ['debug', 'debug', 'info', 'debug'],
  );
});

test('kafkajs protocol errors: a response line is debug exactly for the routine answers, an error for every other code', async () => {
  const { createRequire } = await import('node:module');
  const { errorCodes } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes: { type: string; message: string }[] };
  assert.ok(errorCodes.length > 50, 'the table of kafkajs protocol errors is read');
  fc.assert(
    fc.property(fc.constantFrom(...errorCodes), fc.boolean(), (code, asRetry) => {
      const entry = asRetry
        ? { level: 1, message: `Failed to send messages: ${code.message}`, fields: { retryCount: 1, retryTime: 40 } }
        : { level: 1, message: 'Response Produce(key: 0, version: 7)', fields: { error: code.message } };
      const routine = ROUTINE_KAFKA_ANSWERS.has(code.type);
      assert.equal(kafkaLogErrorType(entry.message, entry.fields), code.type);
      assert.deepEqual(levelsFor([entry]), [routine ? 'debug' : asRetry ? 'warn' : 'error'], code.type);
    }),
  );
});
