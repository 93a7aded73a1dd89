/**
 * Turns one chunk of crawled-page records into the records a transaction will
 * write: a verdict (novel or duplicate) plus a changelog entry for every page
 * that decodes and fingerprints, a dead letter for every record that does not.
 * Every input offset ends in exactly one verdict or one dead letter.
 *
 * Kafka-free: records in, messages out (the consumer module owns kafkajs).
 */
import { DedupError, type ErrorCode } from '../errors.js';
import type { FingerprintPool, FingerprintResult, Fingerprinter, PageContent } from '../fingerprint/index.js';
import type { Decider, Verdict } from '../dedup/decider.js';
import type { CrawledPage } from '../wire/crawled-page.js';
import type { RecordCodec } from '../wire/record-codec.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import { FINGERPRINT_VERSION_HEADER, RECORD_OVERHEAD_BYTES, type OutputMessage } from '../wire/output-record.js';

export type { OutputMessage } from '../wire/output-record.js';
import type { PreparePool } from './prepare-pool.js';
import type { PreparedMeta } from './prepare-worker.js';

export interface InputRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Record timestamp, milliseconds since the epoch, as kafkajs gives it (a string). */
  readonly timestamp: string;
}

export interface ProcessedChunk {
  /** Topic name → messages, in input order within each topic. */
  readonly topicMessages: Map<string, OutputMessage[]>;
  readonly novel: number;
  readonly duplicates: number;
  readonly deadLetters: Map<ErrorCode | 'UNKNOWN', number>;
  /** Record timestamps of the chunk (verdict latency is observed after commit). */
  readonly timestamps: number[];
  readonly verdicts: DecidedVerdict[];
  /** Set by the consumer after the commit: last offset written per "topic:partition". */
  written?: Map<string, bigint>;
}

/** What a verdict record needs, from the single-instance decider or the sharded join. */
export type DecidedVerdict = Pick<Verdict, 'verdict' | 'duplicateOf' | 'distance' | 'hi' | 'lo' | 'duplicateOfHi' | 'duplicateOfLo' | 'sequence' | 'repeated'>;

/** Codes that are the record's own fault: it goes to the dead-letter topic and the stream moves on. */
export function isRecordFault(error: unknown): boolean {
  if (!(error instanceof DedupError)) return false;
  return error.code === 'SCHEMA_UNKNOWN' || error.code.startsWith('RECORD_') || error.code.startsWith('PAGE_');
}

/**
 * A page prepared by the prepare pool: its body stayed in the worker, which
 * encoded the novel verdict the page gets with its fresh fingerprint.
 */
export interface OffloadedPage extends PreparedMeta {
  /** What codec.encodeNovel writes for this page and its fresh fingerprint; null when the worker could not encode it. */
  readonly novelValue: Buffer | null;
}

/** A decoded page: whole when decoded on this thread, without its body when prepared by the pool. */
export type PreparedPage = CrawledPage | OffloadedPage;

/** A chunk decoded and fingerprinted, not yet decided. */
export interface PreparedChunk {
  readonly records: readonly InputRecord[];
  readonly timestamps: number[];
  /** Per record: the page, or why it cannot be decided. */
  readonly decoded: (PreparedPage | Error)[];
  /** Fingerprints of the decoded pages, in order. */
  readonly results: FingerprintResult[];
}

export interface ProcessorTopics {
  readonly sourceTopic: string;
  readonly novelTopic: string;
  readonly duplicateTopic: string;
  readonly deadLetterTopic: string;
  readonly fingerprintsTopic: string;
}

export interface PageBatchProcessorOptions {
  readonly topics: ProcessorTopics;
  readonly codec: RecordCodec;
  readonly fingerprinter: Fingerprinter;
  /** When set, pages are fingerprinted on worker threads, a chunk at a time (decoded here). */
  readonly pool?: FingerprintPool | null;
  /**
   * When set (it wins over `pool`), records are decoded, fingerprinted and
   * their novel verdicts encoded on worker threads: this thread keeps the
   * registry look-ups and the decisions.
   */
  readonly preparePool?: PreparePool | null;
  /** The single-instance decider; null in sharded mode (verdicts come from the shards). */
  readonly decider: Decider | null;
  readonly metrics?: DedupMetrics;
  /** Dead letters keep the original value up to this many bytes (the rest is cut, and said so in a header). */
  readonly maxDeadLetterBytes: number;
  /**
   * The largest record each output topic accepts (its max.message.bytes, less
   * batch overhead). A verdict that would not fit is dead-lettered with
   * PAGE_TOO_LARGE instead of failing the transaction: a refused transaction
   * is retried forever or stops the pipeline at the same record on every
   * restart. Topics not listed are not checked.
   */
  readonly maxRecordBytes?: ReadonlyMap<string, number>;
  /** Written as a header on every changelog entry (see FINGERPRINT_VERSION_HEADER). */
  readonly fingerprintVersion?: string;
}

export const DLQ_HEADERS = {
  code: 'dedup.error.code',
  message: 'dedup.error.message',
  topic: 'dedup.source.topic',
  partition: 'dedup.source.partition',
  offset: 'dedup.source.offset',
  timestamp: 'dedup.source.timestamp',
  truncated: 'dedup.value.original-bytes',
} as const;

export function createPageBatchProcessor(options: PageBatchProcessorOptions) {
  const { topics, codec, fingerprinter, decider, metrics } = options;
  const limits = options.maxRecordBytes ?? new Map<string, number>();
  const fits = (topic: string, key: string, value: Buffer): boolean => {
    const limit = limits.get(topic);
    return limit === undefined || Buffer.byteLength(key) + value.length + RECORD_OVERHEAD_BYTES <= limit;
  };
  // A dead letter must fit its own topic too: the original is cut to fit.
  const dlqLimit = limits.get(topics.deadLetterTopic);
  const maxDeadLetterBytes = dlqLimit === undefined ? options.maxDeadLetterBytes : Math.min(options.maxDeadLetterBytes, Math.max(1024, dlqLimit - 16 * 1024));
  const pool = options.pool ?? null;
  const preparePool = options.preparePool ?? null;

  const content = (page: CrawledPage): PageContent => (page.html !== null ? { html: page.html } : { text: page.text ?? '' });

  /**
   * Fingerprints every decoded page of the chunk: on the pool when there is
   * one (the chunk's wall time is then shared evenly in the latency metric),
   * else inline with a per-page timing.
   */
  async function fingerprintAll(pages: CrawledPage[]): Promise<FingerprintResult[]> {
    if (pages.length === 0) return [];
    if (pool === null) {
      const out = new Array<FingerprintResult>(pages.length);
      for (let i = 0; i < pages.length; i++) {
        const started = process.hrtime.bigint();
        out[i] = fingerprinter.fingerprint(content(pages[i]!));
        metrics?.fingerprintDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      }
      return out;
    }
    const started = process.hrtime.bigint();
    let results: FingerprintResult[];
    try {
      results = await pool.fingerprintMany(pages.map(content));
    } catch (error) {
      throw new DedupError('WORKER_FAILED', `fingerprint worker failed: ${(error as Error).message}`, { cause: error });
    }
    if (metrics) {
      const each = Number(process.hrtime.bigint() - started) / 1e9 / pages.length;
      for (let i = 0; i < pages.length; i++) metrics.fingerprintDuration.observe(each);
    }
    return results;
  }

  function deadLetter(record: InputRecord, error: unknown): { message: OutputMessage; code: ErrorCode | 'UNKNOWN' } {
    const code = error instanceof DedupError ? error.code : 'UNKNOWN';
    const original = record.value ?? Buffer.alloc(0);
    const headers: Record<string, string> = {
      [DLQ_HEADERS.code]: code,
      [DLQ_HEADERS.message]: (error as Error).message.slice(0, 2000),
      [DLQ_HEADERS.topic]: topics.sourceTopic,
      [DLQ_HEADERS.partition]: String(record.partition),
      [DLQ_HEADERS.offset]: record.offset,
      [DLQ_HEADERS.timestamp]: record.timestamp,
    };
    let value = original;
    if (original.length > maxDeadLetterBytes) {
      value = original.subarray(0, maxDeadLetterBytes);
      headers[DLQ_HEADERS.truncated] = String(original.length);
    }
    return { message: { key: record.key, value, headers }, code };
  }

  /**
   * Stage one of a chunk: decode every record and fingerprint the pages. It
   * touches no decider state, so the consumer runs it for the next chunk
   * while the current one is decided and committed.
   */
  async function prepare(records: readonly InputRecord[]): Promise<PreparedChunk> {
    if (preparePool !== null) return prepareOffloaded(records);
    const timestamps: number[] = [];
    const decoded: (CrawledPage | Error)[] = [];
    for (const record of records) {
      const timestamp = Number(record.timestamp);
      timestamps.push(timestamp);
      try {
        decoded.push(await codec.decodePage(record.value, timestamp));
      } catch (error) {
        if (error instanceof DedupError && error.retriable) throw error;
        decoded.push(error instanceof Error ? error : new Error(String(error)));
      }
    }
    const pages = decoded.filter((d): d is CrawledPage => !(d instanceof Error));
    const results = await fingerprintAll(pages);
    return { records, timestamps, decoded, results };
  }

  /** Stage one on the prepare pool; the records it leaves to this thread are decoded and fingerprinted here, as without it. */
  async function prepareOffloaded(records: readonly InputRecord[]): Promise<PreparedChunk> {
    const timestamps = records.map((r) => Number(r.timestamp));
    const started = process.hrtime.bigint();
    const outcomes = await preparePool!.prepare(
      records.map((r) => r.value),
      timestamps,
    );
    const decoded: (PreparedPage | Error)[] = [];
    const results: FingerprintResult[] = [];
    for (let i = 0; i < records.length; i++) {
      const outcome = outcomes[i]!;
      if (outcome.kind === 'page') {
        decoded.push({ ...outcome.meta, novelValue: outcome.novelValue });
        results.push(outcome.result);
      } else if (outcome.kind === 'fault') {
        decoded.push(outcome.error);
      } else {
        let page: CrawledPage;
        try {
          page = await codec.decodePage(records[i]!.value, timestamps[i]!);
        } catch (error) {
          if (error instanceof DedupError && error.retriable) throw error;
          decoded.push(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        decoded.push(page);
        results.push(fingerprinter.fingerprint(content(page)));
      }
    }
    if (metrics && results.length > 0) {
      const each = Number(process.hrtime.bigint() - started) / 1e9 / results.length;
      for (let i = 0; i < results.length; i++) metrics.fingerprintDuration.observe(each);
    }
    return { records, timestamps, decoded, results };
  }

  /**
   * The novel verdict's value. A page from the pool carries it encoded for its
   * fresh fingerprint; a repeated id whose recorded fingerprint differs (the
   * verdict replays the recorded one) is decoded again here and encoded as
   * without the pool.
   */
  async function novelValue(record: InputRecord, timestamp: number, page: PreparedPage, fresh: FingerprintResult, verdict: DecidedVerdict): Promise<Buffer> {
    if (!('novelValue' in page)) return codec.encodeNovel({ page, hi: verdict.hi, lo: verdict.lo });
    if (page.novelValue !== null && verdict.hi >>> 0 === fresh.hi >>> 0 && verdict.lo >>> 0 === fresh.lo >>> 0) return page.novelValue;
    return codec.encodeNovel({ page: await codec.decodePage(record.value, timestamp), hi: verdict.hi, lo: verdict.lo });
  }

  /**
   * Stage two: decide in order (this is where state changes) and encode the
   * outputs. `verdictOf` is where verdicts come from: the single-instance
   * decider by default; the sharded pipeline passes the joined answers and
   * writes no changelog here (its shards do).
   *
   * Only the record's own faults become dead letters (RECORD_*, PAGE_*,
   * SCHEMA_UNKNOWN). Anything else thrown here is ours, not the record's: it
   * propagates, and the consumer stops and restarts from durable state rather
   * than dead-letter a good page and commit past it.
   */
  async function decide(prepared: PreparedChunk, verdictOf?: (index: number, page: PreparedPage, result: FingerprintResult) => DecidedVerdict): Promise<ProcessedChunk> {
    const { records, timestamps, decoded, results } = prepared;
    const writeChangelog = verdictOf === undefined;
    const novelMessages: OutputMessage[] = [];
    const duplicateMessages: OutputMessage[] = [];
    const deadLetterMessages: OutputMessage[] = [];
    const changeMessages: OutputMessage[] = [];
    const deadLetters = new Map<ErrorCode | 'UNKNOWN', number>();
    const verdicts: DecidedVerdict[] = [];
    let novel = 0;
    let duplicates = 0;
    let next = 0;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      const item = decoded[i]!;
      let fault: unknown = null;
      let page: PreparedPage | null = null;
      let result: FingerprintResult | null = null;
      if (item instanceof Error) fault = item;
      else {
        page = item;
        result = results[next++]!;
        if (result.empty) fault = new DedupError('PAGE_EMPTY', 'page has no text content to fingerprint');
      }
      if (fault !== null) {
        if (!isRecordFault(fault)) throw fault;
        const { message, code } = deadLetter(record, fault);
        deadLetterMessages.push(message);
        deadLetters.set(code, (deadLetters.get(code) ?? 0) + 1);
        continue;
      }
      const short = result!.short;
      let verdict: DecidedVerdict;
      if (verdictOf) verdict = verdictOf(i, page!, result!);
      else if (decider === null) throw new DedupError('KAFKA', 'no decider and no joined verdicts: the processor was built for sharded mode');
      else {
        const started = process.hrtime.bigint();
        const decided = decider.decide({ id: page!.id, hi: result!.hi, lo: result!.lo, short, fetchedAt: page!.fetchedAt, sketch: result!.sketch });
        if (metrics) {
          metrics.probeDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
          if (!decided.repeated) metrics.probeCandidates.observe(decided.candidates);
          if (decided.secondStage !== null) metrics.secondStage.inc({ outcome: decided.secondStage });
        }
        verdict = decided;
      }
      const topic = verdict.verdict === 'novel' ? topics.novelTopic : topics.duplicateTopic;
      const value =
        verdict.verdict === 'novel'
          ? await novelValue(record, timestamps[i]!, page!, result!, verdict)
          : await codec.encodeDuplicate({
              page: page!,
              hi: verdict.hi,
              lo: verdict.lo,
              duplicateOf: verdict.duplicateOf!,
              distance: verdict.distance!,
              duplicateOfHi: verdict.duplicateOfHi,
              duplicateOfLo: verdict.duplicateOfLo,
            });
      if (!fits(topic, page!.id, value)) {
        // Decided (the index holds it, the changelog below records it), but
        // its verdict cannot be written: the reader gets a dead letter instead.
        const tooLarge = new DedupError('PAGE_TOO_LARGE', `its ${verdict.verdict} verdict is ${value.length} bytes, more than topic ${topic} accepts (max.message.bytes ${limits.get(topic)})`);
        const { message, code } = deadLetter(record, tooLarge);
        deadLetterMessages.push(message);
        deadLetters.set(code, (deadLetters.get(code) ?? 0) + 1);
      } else if (verdict.verdict === 'novel') {
        novel++;
        verdicts.push(verdict);
        novelMessages.push({ key: page!.id, value });
      } else {
        duplicates++;
        verdicts.push(verdict);
        duplicateMessages.push({ key: page!.id, value });
      }
      if (!writeChangelog) continue;
      // Written for repeated ids too: if the first attempt's transaction
      // aborted, this is the copy that lands.
      changeMessages.push({
        key: page!.id,
        ...(options.fingerprintVersion ? { headers: { [FINGERPRINT_VERSION_HEADER]: options.fingerprintVersion } } : {}),
        value: await codec.encodeChange({
          id: page!.id,
          hi: verdict.hi,
          lo: verdict.lo,
          short,
          duplicateOf: verdict.duplicateOf,
          distance: verdict.distance ?? 0,
          fetchedAt: page!.fetchedAt,
          sequence: verdict.sequence,
          sketch: options.decider?.secondStage ? result!.sketch : null,
        }),
      });
    }

    const topicMessages = new Map<string, OutputMessage[]>();
    if (novelMessages.length) topicMessages.set(topics.novelTopic, novelMessages);
    if (duplicateMessages.length) topicMessages.set(topics.duplicateTopic, duplicateMessages);
    if (deadLetterMessages.length) topicMessages.set(topics.deadLetterTopic, deadLetterMessages);
    if (changeMessages.length) topicMessages.set(topics.fingerprintsTopic, changeMessages);
    return { topicMessages, novel, duplicates, deadLetters, timestamps, verdicts };
  }

  return {
    prepare,
    decide,
    /**
     * Decides a chunk: prepare, then decide. Throws only errors that are not
     * the records' fault: retriable ones (registry outage: retry the chunk,
     * do not dead-letter it) and WORKER_FAILED (restart the process). A
     * retried chunk yields the same verdicts (recorded ids replay theirs).
     */
    async process(records: readonly InputRecord[]): Promise<ProcessedChunk> {
      return decide(await prepare(records));
    },
  };
}

export type PageBatchProcessor = ReturnType<typeof createPageBatchProcessor>;
