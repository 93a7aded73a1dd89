/**
 * The demo crawler: publishes generated pages (demo-pages.ts) to the pages
 * topic, Avro through the registry when one is configured, JSON otherwise,
 * optionally paced, optionally with the bad records a real crawler produces.
 */
import { DedupError } from '../errors.js';
import { createKafka, ensureTopics, IDEMPOTENT_PRODUCER_RETRY, type KafkaClientOptions, type TopicLayout } from '../kafka/client.js';
import type { Logger } from '../logger.js';
import { createRecordCodecFromConfig, type RegistryCodecOptions } from '../wire/record-codec.js';
import { demoPages } from './demo-pages.js';

/** What the feed needs: the brokers, the topics (created when createTopics is set) and the codec's registry settings. */
export type DemoFeedOptions = KafkaClientOptions & TopicLayout & RegistryCodecOptions & { readonly createTopics: boolean };

/** Records a crawler sends by mistake; each must end in the dead-letter topic. */
export function badRecords(): { key: string; value: Buffer }[] {
  return [
    { key: 'bad-garbage-json', value: Buffer.from('{"id": "x", "html": ') },
    { key: 'bad-not-json', value: Buffer.from('this is not a record') },
    // A broken byte in the body would be decoded and decided; in the id it is refused.
    { key: 'bad-invalid-utf8-id', value: Buffer.concat([Buffer.from('{"id":"bad-utf8-'), Buffer.from([0xc3, 0x28]), Buffer.from('","url":"u","html":"<p>a page whose id is broken</p>"}')]) },
    { key: 'bad-binary-body', value: Buffer.from(JSON.stringify({ id: 'bad-binary', url: 'https://e.example/logo.png', html: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]).toString('utf8') })) },
    { key: 'bad-empty-page', value: Buffer.from(JSON.stringify({ id: 'bad-empty', url: 'https://e.example/', html: '<html><body></body></html>' })) },
    { key: 'bad-unknown-schema', value: Buffer.from([0, 0x7f, 0xff, 0xff, 0x01, 0x02, 0x03]) },
    { key: 'bad-missing-id', value: Buffer.from(JSON.stringify({ url: 'https://e.example/', html: '<p>no id</p>' })) },
  ];
}

/** Waits `ms`, or less when the signal aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Whether a failed send is refused for good (a record too large, no rights): resending cannot help. */
function refusedForGood(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown; originalError?: unknown }).cause ?? (e as { originalError?: unknown }).originalError) {
    if ((e as { name?: string }).name === 'KafkaJSProtocolError' && (e as { retriable?: boolean }).retriable === false) return true;
  }
  return false;
}

/** Pause before resending a batch after its `failures`-th failure in a row: 0.5 s, doubling, up to 10 s. */
export function resendDelayMs(failures: number): number {
  return Math.min(10_000, 500 * 2 ** Math.min(Math.max(0, failures - 1), 20));
}

/**
 * Sends one batch, and sends it again after a pause while the broker is
 * unreachable (a restart, a network cut), so a feed outlives a broker
 * restart and loses nothing it had not published. A batch whose first send
 * reached the broker before the failure is then written twice: the feed is
 * at-least-once across such a failure, and the pipeline gives an id it sees
 * again its first verdict. Gives up after `giveUpAfterMs` of failures in a row.
 */
async function sendWithRetry(send: () => Promise<unknown>, reconnect: () => Promise<void>, logger: Logger, giveUpAfterMs: number, signal: AbortSignal | undefined): Promise<void> {
  let firstFailure = 0;
  for (let failures = 1; ; failures++) {
    try {
      await send();
      if (failures > 1) logger.info('publishing again after a broker outage', { attempts: failures });
      return;
    } catch (error) {
      firstFailure ||= Date.now();
      if (refusedForGood(error) || signal?.aborted || Date.now() - firstFailure >= giveUpAfterMs) throw error;
      const delayMs = resendDelayMs(failures);
      logger.warn('publishing failed; sending the same batch again', { attempt: failures, retryInSeconds: delayMs / 1000, error });
      await pause(delayMs, signal);
      await reconnect().catch(() => undefined);
    }
  }
}

export async function publishDemoPages(
  config: DemoFeedOptions,
  logger: Logger,
  options: {
    count: number;
    seed: number;
    ratePerSecond: number;
    bad: boolean;
    /** Stops publishing after the batch in flight; the producer then disconnects cleanly. */
    signal?: AbortSignal;
    /** How long a batch is sent again while the broker is unreachable before the feed gives up (default 5 minutes). */
    giveUpAfterMs?: number;
  },
): Promise<number> {
  const { signal } = options;
  const kafka = createKafka(config, logger);
  if (config.createTopics) await ensureTopics(kafka, config, logger);
  const codec = await createRecordCodecFromConfig(config);
  const producer = kafka.producer({ idempotent: true, retry: IDEMPOTENT_PRODUCER_RETRY, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  let sent = 0;
  try {
    const batchSize = options.ratePerSecond > 0 ? Math.max(1, Math.round(options.ratePerSecond / 10)) : 200;
    const pages = demoPages({ seed: options.seed });
    // One broken record every BAD_EVERY pages, cycling through the kinds, so
    // the dead-letter metrics move from the start of a demo.
    const BAD_EVERY = 250;
    const bad = options.bad ? badRecords() : [];
    let badSent = 0;
    let pagesSent = 0;
    const started = Date.now();
    // `count` pages; broken records come on top of them.
    while (pagesSent < options.count && !signal?.aborted) {
      const messages: { key: string; value: Buffer }[] = [];
      for (let i = 0; i < batchSize && pagesSent < options.count; i++) {
        if (bad.length > 0 && pagesSent % BAD_EVERY === 0) {
          messages.push(bad[badSent++ % bad.length]!);
        }
        const page = pages.next().value!;
        messages.push({ key: page.id, value: await codec.encodePage({ id: page.id, url: page.url, fetchedAt: page.fetchedAt, html: page.html, text: null }) });
        pagesSent++;
      }
      await sendWithRetry(() => producer.send({ topic: config.pagesTopic, acks: -1, messages }), () => producer.connect(), logger, options.giveUpAfterMs ?? 300_000, signal);
      sent += messages.length;
      if (options.ratePerSecond > 0) {
        const due = started + (pagesSent / options.ratePerSecond) * 1000;
        const wait = due - Date.now();
        if (wait > 0) await pause(wait, signal);
      }
    }
  } catch (error) {
    throw new DedupError('KAFKA', `publishing demo pages failed after ${sent} records: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
  return sent;
}
