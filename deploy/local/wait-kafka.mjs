// Wait until the Kafka broker in KAFKA_BROKERS answers a real client call
// (admin.connect + describeCluster with a controller elected), or fail at the deadline.
// Then (unless KAFKA_WARMUP=0) warm the coordinators: look up a consumer group's offsets and
// initialise a transactional producer id, which makes the broker create __consumer_offsets and
// __transaction_state now instead of during the first test ("coordinator not available/loading").
// Usage: KAFKA_BROKERS=127.0.0.1:9092 [KAFKA_WAIT_MS=90000] [KAFKA_WARMUP=0] node deploy/local/wait-kafka.mjs
// Uses kafkajs from the repository's node_modules (run `npm ci` first).
import { Kafka, logLevel } from 'kafkajs';

const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
if (brokers.length === 0) {
  console.error('wait-kafka: KAFKA_BROKERS is not set');
  process.exit(2);
}
const waitMs = Number(process.env.KAFKA_WAIT_MS ?? 90_000);
const deadline = Date.now() + waitMs;

const kafka = new Kafka({
  clientId: 'infra-wait',
  brokers,
  logLevel: logLevel.NOTHING,
  connectionTimeout: 1000,
  requestTimeout: 3000,
  retry: { retries: 0 },
});

async function warmUp() {
  const t0 = Date.now();
  const warm = new Kafka({ clientId: 'infra-warmup', brokers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
  // Coordinator errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, ..._LOAD_IN_PROGRESS) are expected
  // while the internal topics are created and loaded; kafkajs' admin.fetchOffsets does not retry
  // NOT_COORDINATOR itself, so retry the whole step until the deadline.
  const attempt = async (what, fn) => {
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (Date.now() > deadline) {
          console.error(`wait-kafka: warm-up (${what}) failed: ${err?.name ?? 'Error'}: ${err?.message ?? err}`);
          process.exit(1);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  await attempt('group coordinator', async () => {
    const admin = warm.admin();
    try {
      await admin.connect();
      await admin.fetchOffsets({ groupId: 'infra-warmup', topics: [] });
    } finally {
      await admin.disconnect().catch(() => {});
    }
  });
  await attempt('transaction coordinator', async () => {
    const producer = warm.producer({ transactionalId: 'infra-warmup', idempotent: true, maxInFlightRequests: 1 });
    try {
      await producer.connect();
      const txn = await producer.transaction(); // InitProducerId -> transaction coordinator
      await txn.abort(); // nothing was added, so no EndTxn is sent
    } finally {
      await producer.disconnect().catch(() => {});
    }
  });
  console.log(`wait-kafka: group + transaction coordinators ready (${Date.now() - t0} ms)`);
}

let lastError = 'no attempt made';
for (;;) {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const { brokers: live, controller } = await admin.describeCluster();
    if (live.length > 0 && controller !== null && controller !== undefined) {
      await admin.disconnect();
      console.log(`wait-kafka: ready (${live.map((b) => `${b.host}:${b.port}`).join(',')}, controller ${controller})`);
      if (process.env.KAFKA_WARMUP !== '0') await warmUp();
      process.exit(0);
    }
    lastError = `describeCluster: ${live.length} broker(s), controller ${controller}`;
  } catch (err) {
    lastError = `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
  }
  await admin.disconnect().catch(() => {});
  if (Date.now() > deadline) {
    console.error(`wait-kafka: ${brokers.join(',')} not ready after ${waitMs} ms; last error: ${lastError}`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}
