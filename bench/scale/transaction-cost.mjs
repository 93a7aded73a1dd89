// What one verdict transaction costs, two builds side by side in one process (not a test):
// each build's createVerdictProducer commits the same transactions on the real broker,
// in alternating blocks, back to back as the group committer runs them when pages keep
// coming. A transaction holds N novel verdicts of 28 KiB plus N changelog entries and the
// input offset of one partition; the output topics have P partitions. Per build it reports
// the wall time of a transaction (p50/p90/p99), the client's CPU per transaction (every
// thread of this process), and the requests per transaction by kind, and keeps them in
// bench/results/scale.json under singleLatency.transactionCost (BENCH_OUTPUT=<file>: there instead).
//
//   source <stack>/env; npx tsc -p tsconfig.json
//   node bench/scale/transaction-cost.mjs <base dist dir> [pages per transaction=4,27] [partitions=1,6] [transactions=200]
import { Kafka, logLevel } from 'kafkajs';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

const [baseDist, sizesArg = '4,27', partitionsArg = '1,6', countArg = '200'] = process.argv.slice(2);
if (!baseDist || !process.env.KAFKA_BROKERS) throw new Error('usage: KAFKA_BROKERS=... node bench/scale/transaction-cost.mjs <base dist dir> [sizes] [partitions] [transactions]');
const builds = {
  base: await import(join(resolve(baseDist), 'src', 'kafka', 'verdict-producer.js')),
  this: await import(new URL('../../dist/src/kafka/verdict-producer.js', import.meta.url).href),
};
const kafka = new Kafka({ clientId: 'bench-tx-cost', brokers: process.env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 20, maxRetryTime: 5000 } });
const q = (xs, f) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(f * xs.length))];
const verdict = Buffer.alloc(28 * 1024, 'page text and markup ');
const entry = Buffer.alloc(120, 'f');
const BLOCK = 10;
const loadAtStart = loadavg();
const rows = [];
console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| pages/tx | partitions | build | tx wall p50 / p90 / p99, ms | client CPU per tx, ms | requests per tx |');
console.log('|---:|---:|---|---|---:|---|');
for (const partitions of partitionsArg.split(',').map(Number)) {
  for (const size of sizesArg.split(',').map(Number)) {
    const run = `bench-txcost-${Date.now().toString(36)}`;
    const [out, log, input] = [`${run}.novel`, `${run}.fp`, `${run}.pages`];
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [out, log, input].map((topic) => ({ topic, numPartitions: topic === out ? partitions : 1, configEntries: [{ name: 'max.message.bytes', value: String(16 << 20) }] })) });
    const stats = {};
    const producers = {};
    for (const [name, build] of Object.entries(builds)) {
      stats[name] = { wall: [], cpu: 0, tx: 0, requests: {} };
      // Each build builds its kafkajs producer through kafka.producer: listen to the one it builds.
      const producer = kafka.producer;
      kafka.producer = (config) => {
        const built = producer.call(kafka, config);
        built.on(built.events.REQUEST, (e) => (stats[name].requests[e.payload.apiName] = (stats[name].requests[e.payload.apiName] ?? 0) + 1));
        return built;
      };
      producers[name] = build.createVerdictProducer(kafka, `${run}-${name}`);
      kafka.producer = producer;
      await producers[name].connect();
      stats[name].requests = {};
    }
    let offset = 0;
    const total = Number(countArg);
    for (let done = 0; done < total; done += BLOCK) {
      for (const name of done % (2 * BLOCK) === 0 ? ['base', 'this'] : ['this', 'base']) {
        const s = stats[name];
        const cpu = process.cpuUsage();
        for (let i = 0; i < BLOCK; i++) {
          const messages = new Map([
            [out, Array.from({ length: size }, (_, j) => ({ key: `${name}-${offset + j}`, value: verdict }))],
            [log, Array.from({ length: size }, (_, j) => ({ key: `${name}-${offset + j}`, value: entry, partition: 0 }))],
          ]);
          offset += size;
          const t = performance.now();
          await producers[name].commit(messages, `${run}-group-${name}`, [{ topic: input, partition: 0, offset: String(offset) }]);
          s.wall.push(performance.now() - t);
        }
        const used = process.cpuUsage(cpu);
        s.cpu += (used.user + used.system) / 1000;
        s.tx += BLOCK;
      }
    }
    for (const [name, s] of Object.entries(stats)) {
      const perTx = Object.entries(s.requests).map(([api, n]) => `${api} ${(n / s.tx).toFixed(2)}`).join(', ');
      const requests = Object.fromEntries(Object.entries(s.requests).map(([api, n]) => [api, n / s.tx]));
      rows.push({ build: name, pagesPerTransaction: size, outputPartitions: partitions, transactions: s.tx, wallP50Ms: q(s.wall, 0.5), wallP90Ms: q(s.wall, 0.9), wallP99Ms: q(s.wall, 0.99), clientCpuMsPerTransaction: s.cpu / s.tx, requestsPerTransaction: requests });
      console.log(`| ${size} | ${partitions} | ${name} | ${q(s.wall, 0.5).toFixed(1)} / ${q(s.wall, 0.9).toFixed(1)} / ${q(s.wall, 0.99).toFixed(1)} | ${(s.cpu / s.tx).toFixed(2)} | ${perTx} |`);
      await producers[name].disconnect();
    }
    await admin.deleteTopics({ topics: [out, log, input] }).catch(() => undefined);
    await admin.disconnect();
  }
}
console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const output = process.env.BENCH_OUTPUT ?? new URL('../results/scale.json', import.meta.url);
const results = JSON.parse(readFileSync(output, 'utf8'));
results.singleLatency ??= {};
results.singleLatency.transactionCost = {
  what: 'One verdict transaction, two builds alternated in blocks of 10 in one process, back to back on the shared broker: wall time, client CPU (all threads of the process) and kafkajs requests per transaction.',
  command: `node bench/scale/transaction-cost.mjs <base dist> ${sizesArg} ${partitionsArg} ${countArg}`,
  date: new Date().toISOString(),
  base: baseDist,
  loadavgAtStart: loadAtStart,
  loadavgAtEnd: loadavg(),
  rows,
};
writeFileSync(output, `${JSON.stringify(results, null, 2)}\n`);
