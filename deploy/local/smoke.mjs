// Smoke check of the local stack started by deploy/local/up.sh.
//   source .infra/env && node deploy/local/smoke.mjs
// Checks: topic creation; plain produce/consume; a kafkajs transactional producer
// (transaction + send + sendOffsets + commit) seen by a read_committed consumer, and an aborted
// transaction that is NOT seen; a compacted topic can be created; and, when SCHEMA_REGISTRY_URL is
// set, the @kafkajs/confluent-schema-registry round trip (register on a new subject, register again,
// encode, decode, decode of an unknown schema id must throw). Exits non-zero on the first failure.
import { Kafka, logLevel } from 'kafkajs';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';

const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
if (brokers.length === 0) fail('KAFKA_BROKERS is not set (source the env file written by up.sh)');
const run = `${Date.now().toString(36)}-${process.pid}`;
const kafka = new Kafka({ clientId: `smoke-${run}`, brokers, logLevel: logLevel.ERROR });
const started = Date.now();

function fail(message, err) {
  console.error(`smoke: FAIL: ${message}${err ? `\n  ${err?.name ?? 'Error'}: ${err?.message ?? err}` : ''}`);
  process.exit(1);
}
function ok(message) {
  console.log(`smoke: ok   ${message} (${Date.now() - started} ms)`);
}
async function step(name, fn) {
  try {
    const detail = await fn();
    ok(detail ? `${name}: ${detail}` : name);
  } catch (err) {
    fail(name, err);
  }
}
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

// Consume from the beginning until `count` messages arrived (or time out); returns their values.
async function consumeN(topic, count, { isolationLevel, groupId = `smoke-read-${run}-${topic}`, timeoutMs = 30_000 } = {}) {
  const consumer = kafka.consumer({ groupId, readUncommitted: isolationLevel === 'read_uncommitted', maxWaitTimeInMs: 200 });
  const values = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await withTimeout(new Promise((resolve, reject) => {
      consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value?.toString());
          if (values.length >= count) resolve();
        },
      }).catch(reject);
    }), timeoutMs, `${count} message(s) on ${topic}`);
  } finally {
    await consumer.disconnect();
  }
  return values;
}

const admin = kafka.admin();
const plainTopic = `smoke-plain-${run}`;
const inTopic = `smoke-tx-in-${run}`;
const outTopic = `smoke-tx-out-${run}`;
const compactTopic = `smoke-compact-${run}`;

await step('admin connect + describeCluster', async () => {
  await admin.connect();
  const { brokers: live, controller } = await admin.describeCluster();
  return `${live.length} broker(s), controller ${controller}`;
});

await step('create topics', async () => {
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: plainTopic, numPartitions: 1, replicationFactor: 1 },
      { topic: inTopic, numPartitions: 1, replicationFactor: 1 },
      { topic: outTopic, numPartitions: 1, replicationFactor: 1 },
      {
        topic: compactTopic, numPartitions: 1, replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'segment.ms', value: '1000' }],
      },
    ],
  });
  if (!created) throw new Error('createTopics returned false (topics already exist?)');
  const meta = await admin.fetchTopicMetadata({ topics: [plainTopic, inTopic, outTopic, compactTopic] });
  return meta.topics.map((t) => t.name).join(', ');
});

await step('produce + consume one message', async () => {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: plainTopic, messages: [{ key: 'k', value: 'hello' }] });
  await producer.disconnect();
  const values = await consumeN(plainTopic, 1);
  if (values[0] !== 'hello') throw new Error(`expected "hello", got ${JSON.stringify(values)}`);
});

await step('transactional producer: send + sendOffsets + commit, read_committed consumer sees it', async () => {
  // An input record whose offset the transaction commits for a consumer group (the EOS pattern).
  const seed = kafka.producer();
  await seed.connect();
  await seed.send({ topic: inTopic, messages: [{ key: 'k', value: 'input' }] });
  await seed.disconnect();

  const consumerGroupId = `smoke-eos-${run}`;
  // Own client, quiet logs and a short retry: a transaction started right after a commit gets
  // CONCURRENT_TRANSACTIONS on AddPartitionsToTxn until the commit markers are written (a few ms);
  // kafkajs retries it, but with its default initialRetryTime (300 ms) and logs each retry at ERROR.
  const txKafka = new Kafka({ clientId: `smoke-tx-${run}`, brokers, logLevel: logLevel.NOTHING, retry: { initialRetryTime: 20, retries: 10 } });
  const producer = txKafka.producer({ transactionalId: `smoke-tx-${run}`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const committed = await producer.transaction();
    await committed.send({ topic: outTopic, messages: [{ key: 'k', value: 'committed-1' }] });
    await committed.sendOffsets({ consumerGroupId, topics: [{ topic: inTopic, partitions: [{ partition: 0, offset: '1' }] }] });
    await committed.commit();

    const aborted = await producer.transaction();
    await aborted.send({ topic: outTopic, messages: [{ key: 'k', value: 'aborted' }] });
    await aborted.abort();

    const second = await producer.transaction();
    await second.send({ topic: outTopic, messages: [{ key: 'k', value: 'committed-2' }] });
    await second.commit();
  } finally {
    await producer.disconnect();
  }

  const values = await consumeN(outTopic, 2, { isolationLevel: 'read_committed' });
  if (values.join(',') !== 'committed-1,committed-2') {
    throw new Error(`read_committed consumer saw ${JSON.stringify(values)}, expected ["committed-1","committed-2"]`);
  }
  const offsets = await admin.fetchOffsets({ groupId: consumerGroupId, topics: [inTopic] });
  const off = offsets[0]?.partitions?.[0]?.offset;
  if (off !== '1') throw new Error(`offset committed through sendOffsets is ${off}, expected 1`);
  return `saw ${values.join(', ')} (aborted one hidden); group offset ${off}`;
});

await admin.deleteTopics({ topics: [plainTopic, inTopic, outTopic, compactTopic] }).catch(() => {});
await admin.disconnect();

const registryUrl = process.env.SCHEMA_REGISTRY_URL;
if (!registryUrl) {
  console.log('smoke: skip registry checks (SCHEMA_REGISTRY_URL not set)');
} else {
  const registry = new SchemaRegistry({ host: registryUrl, clientId: 'smoke' });
  const subject = `smoke-${run}-value`;
  const schema = {
    type: SchemaType.AVRO,
    schema: JSON.stringify({
      type: 'record', name: 'Ping', namespace: 'smoke',
      fields: [{ name: 'n', type: 'int' }, { name: 'url', type: 'string' }],
    }),
  };
  let id;
  await step('registry: register on a new subject', async () => {
    ({ id } = await registry.register(schema, { subject }));
    return `id ${id}`;
  });
  await step('registry: register the same schema again', async () => {
    const again = await registry.register(schema, { subject });
    if (again.id !== id) throw new Error(`second register returned id ${again.id}, expected ${id}`);
    return `id ${again.id}`;
  });
  await step('registry: encode + decode', async () => {
    const record = { n: 7, url: 'https://example.org/' };
    const buf = await registry.encode(id, record);
    // Decode through a fresh client so the schema really comes back from the server, not the cache.
    const decoded = await new SchemaRegistry({ host: registryUrl, clientId: 'smoke-2' }).decode(buf);
    if (JSON.stringify(decoded) !== JSON.stringify(record)) throw new Error(`decoded ${JSON.stringify(decoded)}`);
    return `${buf.length} bytes`;
  });
  await step('registry: decode with an unknown schema id throws', async () => {
    const unknown = Buffer.alloc(6);
    unknown.writeUInt8(0, 0);
    unknown.writeInt32BE(2_000_000_000, 1);
    unknown.writeUInt8(0, 5);
    try {
      await registry.decode(unknown);
    } catch (err) {
      return `${err?.name} status=${err?.status} message=${JSON.stringify(err?.message)}`;
    }
    throw new Error('decode of an unknown schema id did not throw');
  });
}

const promUrl = process.env.PROMETHEUS_URL;
if (!promUrl) {
  console.log('smoke: skip Prometheus checks (PROMETHEUS_URL not set)');
} else {
  const { createServer } = await import('node:http');
  const { readFile, writeFile } = await import('node:fs/promises');
  const query = async (expr) => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = await res.json();
    if (body.status !== 'success') throw new Error(`query ${expr}: ${JSON.stringify(body)}`);
    return body.data.result;
  };
  const waitFor = async (what, fn, ms = 15_000) => {
    const end = Date.now() + ms;
    for (;;) {
      if (await fn()) return;
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  // Stand-in for the pipeline on METRICS_PORT, and a second target announced through file_sd.
  const serve = (port, metric) => new Promise((resolve, reject) => {
    const srv = createServer((req, res) => { res.setHeader('content-type', 'text/plain; version=0.0.4'); res.end(`${metric} 1\n`); });
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
  await step('prometheus: ready', async () => {
    const res = await fetch(`${promUrl}/-/ready`);
    if (!res.ok) throw new Error(`/-/ready: HTTP ${res.status}`);
    const rules = await (await fetch(`${promUrl}/api/v1/rules`)).json();
    return `${rules.data.groups.length} rule group(s) loaded`;
  });
  if (process.env.METRICS_PORT) {
    await step(`prometheus: scrapes 127.0.0.1:${process.env.METRICS_PORT} (METRICS_PORT)`, async () => {
      const srv = await serve(Number(process.env.METRICS_PORT), 'smoke_metrics_port_up');
      try {
        await waitFor('smoke_metrics_port_up', async () => (await query('smoke_metrics_port_up')).length > 0);
        const [r] = await query('smoke_metrics_port_up');
        return `job=${r.metric.job}`;
      } finally {
        srv.close();
      }
    });
  }
  const targetsFile = process.env.PROMETHEUS_TARGETS_FILE;
  if (targetsFile) {
    await step('prometheus: picks up a file_sd target', async () => {
      const srv = await serve(0, 'smoke_file_sd_up');
      const before = await readFile(targetsFile, 'utf8');
      try {
        const target = `127.0.0.1:${srv.address().port}`;
        await writeFile(targetsFile, JSON.stringify([{ targets: [target], labels: { job: 'smoke-file-sd' } }]));
        await waitFor('smoke_file_sd_up', async () => (await query('smoke_file_sd_up{job="smoke-file-sd"}')).length > 0);
        return target;
      } finally {
        await writeFile(targetsFile, before);
        srv.close();
      }
    });
  }
}

console.log(`smoke: all checks passed in ${Date.now() - started} ms`);
process.exit(0);
