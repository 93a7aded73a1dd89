/**
 * kcat as the independent producer and reader of the chaos run: pages go in
 * and verdicts come out through a Kafka client that shares no code with the
 * pipeline (librdkafka, not kafkajs).
 *
 * Reading is binary-safe: each record is printed as a text header line with
 * the key and value lengths, then the raw key and value bytes, so hostile
 * values (invalid UTF-8, newlines, megabytes) cannot break the framing.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface KcatRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: Buffer | null;
}

/** Large enough for the biggest hostile record (a page over the 4 MiB limit). */
const MAX_MESSAGE_BYTES = String(16 * 1024 * 1024);

/** Publishes lines `key<TAB>value` from a file, idempotently; rejects when kcat reports any failure. */
export async function produceLines(brokers: string, topic: string, file: string): Promise<void> {
  await run('kcat', ['-P', '-b', brokers, '-t', topic, '-K', '\t', '-l', '-X', 'enable.idempotence=true', '-X', `message.max.bytes=${MAX_MESSAGE_BYTES}`, '-X', 'message.timeout.ms=20000', file], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 60_000,
  });
}

/** Publishes one file's bytes as one record (an empty file is an empty value). */
export async function produceFile(brokers: string, topic: string, key: string, file: string): Promise<void> {
  await run('kcat', ['-P', '-b', brokers, '-t', topic, '-k', key, '-X', 'enable.idempotence=true', '-X', `message.max.bytes=${MAX_MESSAGE_BYTES}`, '-X', 'message.timeout.ms=20000', file], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 60_000,
  });
}

/** True when the broker answers a metadata request. */
export async function brokerAnswers(brokers: string): Promise<boolean> {
  try {
    await run('kcat', ['-L', '-b', brokers, '-m', '3', '-J'], { timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const HEADER = /^(\d+) (\d+) (-?\d+) (-?\d+)$/;

/**
 * Every committed record of a topic, start to end (read_committed: what a
 * downstream consumer sees; aborted transactions are invisible).
 */
export function consumeAll(brokers: string, topic: string): Promise<KcatRecord[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'kcat',
      ['-C', '-b', brokers, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-X', `fetch.message.max.bytes=${MAX_MESSAGE_BYTES}`, '-f', '%p %o %K %S\n%k%s\n'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`kcat -C ${topic} exited ${code}: ${stderr.slice(-2000)}`));
      try {
        resolve(parseFrames(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
}

export function parseFrames(data: Buffer): KcatRecord[] {
  const records: KcatRecord[] = [];
  let at = 0;
  while (at < data.length) {
    const eol = data.indexOf(0x0a, at);
    if (eol < 0) throw new Error(`kcat output: truncated header at byte ${at}`);
    const header = data.subarray(at, eol).toString('latin1');
    const m = HEADER.exec(header);
    if (!m) throw new Error(`kcat output: bad header ${JSON.stringify(header.slice(0, 80))} at byte ${at}`);
    const keyLength = Number(m[3]);
    const valueLength = Number(m[4]);
    at = eol + 1;
    const key = keyLength < 0 ? null : data.subarray(at, at + keyLength).toString('utf8');
    at += Math.max(0, keyLength);
    const value = valueLength < 0 ? null : Buffer.from(data.subarray(at, at + valueLength));
    at += Math.max(0, valueLength);
    if (data[at] !== 0x0a) throw new Error(`kcat output: record at offset ${m[2]} does not end where its lengths say`);
    at += 1;
    records.push({ partition: Number(m[1]), offset: Number(m[2]), key, value });
  }
  return records;
}

/** The dead-letter code of each record, by partition:offset (from the record headers). */
export async function deadLetterCodes(brokers: string, topic: string): Promise<Map<string, string>> {
  const { stdout } = await run(
    'kcat',
    ['-C', '-b', brokers, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-X', `fetch.message.max.bytes=${MAX_MESSAGE_BYTES}`, '-f', '%p:%o %h\n'],
    { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
  );
  const codes = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^(\d+:\d+) .*?dedup\.error\.code=([A-Z0-9_]+)/.exec(line);
    if (m) codes.set(m[1]!, m[2]!);
  }
  return codes;
}
