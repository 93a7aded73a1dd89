/**
 * No producer the product builds makes kafkajs warn "Limiting retries for the
 * idempotent producer may invalidate EoS guarantees": every idempotent
 * producer retries a send until it succeeds or fails for good
 * (IDEMPOTENT_PRODUCER_RETRY in src/kafka/client.ts). kafkajs warns when the
 * producer is built, before any connection, so no broker is needed here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import { createKafka } from '../../../src/kafka/client.js';
import { createVerdictProducer } from '../../../src/kafka/verdict-producer.js';
import { createLogAppender } from '../../../src/kafka/log-appender.js';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'src');

test('the verdict producer and the log appender are built without the EoS warning', () => {
  const lines: string[] = [];
  const kafka = createKafka(loadConfig({ DEDUP_BROKERS: '127.0.0.1:1' }), createLogger('debug', {}, (l) => lines.push(l)));
  createVerdictProducer(kafka, 'eos-check-0');
  createVerdictProducer(kafka, 'eos-check-1');
  createLogAppender(kafka);
  assert.deepEqual(lines.filter((l) => /Limiting retries/.test(l)), []);
});

test('every idempotent kafkajs producer in src/ takes IDEMPOTENT_PRODUCER_RETRY', () => {
  const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  let producers = 0;
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const call of text.matchAll(/(?:kafka\.producer\(|producerWithCachedCoordinators\(\s*kafka,\s*)\{([^}]*)\}/g)) {
      producers++;
      // TRANSACTION_RETRY is IDEMPOTENT_PRODUCER_RETRY with shorter pauses.
      if (/idempotent: true/.test(call[1]!)) assert.match(call[1]!, /retry: (IDEMPOTENT_PRODUCER_RETRY|TRANSACTION_RETRY)/, `${file}: ${call[0]}`);
    }
  }
  assert.ok(producers >= 3, `found ${producers} producers`);
});
