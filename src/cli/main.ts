#!/usr/bin/env node
/**
 * The entry point: `dedup <command>`. Owns signals and the exit code; every
 * other module reports through errors and return values.
 *
 *   dedup run            the Kafka pipeline (config from DEDUP_* and flags)
 *   dedup batch          JSON Lines pages in, verdicts out (no Kafka)
 *   dedup fingerprint    the fingerprint of one document
 *   dedup plan           the table plan and its cost for k and N
 *   dedup demo-feed      publish demo pages to the pages topic
 */
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { ConfigError, DedupError, errorCode } from '../errors.js';
import { CONFIG_OPTIONS, loadConfig, parseFlags, redactConfig } from '../config.js';
import { createFingerprinter } from '../fingerprint/index.js';
import { fingerprintToHex } from '../fingerprint/fingerprint-hex.js';
import { describePlan } from '../index/index.js';
import { createDecider, featureOptionsFromConfig, planFromConfig } from '../dedup/create-decider.js';
import { createLogger } from '../logger.js';
import { inputStream, runBatch } from './batch-command.js';

const USAGE = `usage: dedup <command> [--option value | --option=value ...]

commands:
  run           run the pipeline on Kafka (config: DEDUP_* environment or flags)
  batch         read JSON Lines pages (--input FILE or stdin), write one verdict per line
  fingerprint   print the fingerprint of a document (--html FILE, --text STRING, or stdin as HTML)
  plan          print the table plan and its cost (--k, --table-plan, --expected-fingerprints)
  demo-feed     publish demo pages to the pages topic (--count N, --seed S, --rate PAGES_PER_SECOND)

options (all commands that decide pages):
${CONFIG_OPTIONS.map((o) => `  ${o.flag.padEnd(28)} ${o.description} [${o.env}, default ${JSON.stringify(o.default)}]`).join('\n')}
`;

/** Short flags people type: -k 3. */
function normalizeArgs(args: string[]): string[] {
  return args.map((a) => (a === '-k' ? '--k' : a.startsWith('-k=') ? `--k=${a.slice(3)}` : a));
}

/**
 * Takes the command's own flags out and leaves the config flags for
 * loadConfig. Anything that does not parse (a flag missing its value, a stray
 * argument, a value given to a switch) is a usage error naming every problem:
 * `--progress pages.jsonl` must not silently read stdin.
 */
function takeFlags(args: string[], own: Record<string, 'string' | 'boolean'>): { own: Map<string, string>; rest: string[] } {
  const { flags, rest, problems } = parseFlags(args, own);
  const fileFlag = '--input' in own ? '--input' : '--html' in own ? '--html' : null;
  for (const arg of rest) {
    problems.push(`unexpected argument ${JSON.stringify(arg)}${fileFlag ? ` (read a file with ${fileFlag} FILE)` : ''}`);
  }
  if (problems.length > 0) throw new DedupError('USAGE', `${problems.join('; ')}\n(see dedup help)`);
  const taken = new Map<string, string>();
  for (const name of Object.keys(own)) {
    const value = flags.get(name);
    if (value !== undefined) {
      taken.set(name, value);
      flags.delete(name);
    }
  }
  return { own: taken, rest: [...flags].map(([k, v]) => `${k}=${v}`) };
}

async function batch(args: string[]): Promise<number> {
  const { own, rest } = takeFlags(args, { '--input': 'string', '--progress': 'boolean' });
  const config = loadConfig(process.env, rest);
  const fingerprinter = await createFingerprinter(featureOptionsFromConfig(config));
  const decider = createDecider(config, planFromConfig(config));
  const showProgress = own.get('--progress') === 'true' || process.stderr.isTTY;
  const stats = await runBatch({
    input: inputStream(own.get('--input')),
    output: process.stdout,
    decider,
    fingerprinter,
    maxPageBytes: config.maxPageBytes,
    progress: showProgress ? (s) => process.stderr.write(`dedup batch: ${s.lines} lines, ${s.novel} novel, ${s.duplicate} duplicate, ${s.errors} errors, ${(s.lines / Math.max(s.seconds, 0.001)).toFixed(0)} lines/s\n`) : undefined,
  });
  process.stderr.write(`dedup batch: done: ${stats.lines} lines, ${stats.novel} novel, ${stats.duplicate} duplicate, ${stats.errors} errors in ${stats.seconds.toFixed(1)} s\n`);
  return 0;
}

async function fingerprint(args: string[]): Promise<number> {
  const { own, rest } = takeFlags(args, { '--html': 'string', '--text': 'string' });
  const config = loadConfig(process.env, rest);
  const fingerprinter = await createFingerprinter(featureOptionsFromConfig(config));
  let page: { html?: string; text?: string };
  if (own.has('--text')) page = { text: own.get('--text')! };
  else if (own.has('--html')) page = { html: readFileSync(own.get('--html')!, 'utf8') };
  else page = { html: readFileSync(0, 'utf8') };
  const r = fingerprinter.fingerprint(page);
  process.stdout.write(`${JSON.stringify({ fingerprint: fingerprintToHex(r.hi, r.lo), features: r.features, textLength: r.textLength, short: r.short, empty: r.empty })}\n`);
  return 0;
}

function plan(args: string[]): number {
  const config = loadConfig(process.env, takeFlags(args, {}).rest);
  const p = planFromConfig(config);
  const cost = describePlan(p, config.expectedFingerprints);
  process.stdout.write(`${JSON.stringify({ k: p.k, blockWidths: p.blockWidths, tableBlocks: p.tables.map((t) => t.blocks), ...cost, expectedFingerprints: config.expectedFingerprints }, null, 2)}\n`);
  return 0;
}

async function run(args: string[]): Promise<number> {
  const config = loadConfig(process.env, takeFlags(args, {}).rest);
  const logger = createLogger(config.logLevel, { app: 'simhash-dedup', instance: config.instanceId });
  logger.info('starting', { config: redactConfig(config) });
  const { startPipeline } = await import('../app/pipeline.js');
  const pipeline = await startPipeline(config, logger, new Registry());
  logger.info('running', { metricsPort: pipeline.metricsPort });
  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string, code: number) => {
      if (stopping) return;
      stopping = true;
      logger.info('signal received, shutting down', { signal });
      pipeline.stop().then(
        () => resolve(code),
        (error: unknown) => {
          logger.error('shutdown failed', { error });
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM', 0));
    process.once('SIGINT', () => stop('SIGINT', 0));
    void pipeline.failed.then((error) => {
      logger.error('pipeline failed', { error, code: errorCode(error) });
      stop('fatal', 1);
    });
  });
}

async function demoFeed(args: string[]): Promise<number> {
  const { own, rest } = takeFlags(args, { '--count': 'string', '--seed': 'string', '--rate': 'string', '--bad': 'boolean' });
  const config = loadConfig(process.env, rest);
  const logger = createLogger(config.logLevel, { app: 'simhash-dedup-demo-feed' });
  const { publishDemoPages } = await import('../producers/demo-crawler.js');
  const count = Number(own.get('--count') ?? '1000');
  const seed = Number(own.get('--seed') ?? '42');
  const rate = Number(own.get('--rate') ?? '0');
  if (!Number.isInteger(count) || count < 0 || !Number.isFinite(seed) || !Number.isFinite(rate) || rate < 0) {
    throw new DedupError('USAGE', '--count must be a whole number, --seed and --rate numbers');
  }
  // SIGINT/SIGTERM end the feed after the batch in flight, so the producer
  // disconnects before the broker goes away (scripts/demo.sh stops it first).
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info('signal received, stopping the feed', { signal });
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const sent = await publishDemoPages(config, logger, { count, seed, ratePerSecond: rate, bad: own.get('--bad') === 'true', signal: stop.signal });
    logger.info(stop.signal.aborted ? 'demo feed stopped' : 'demo pages published', { sent, topic: config.pagesTopic });
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rawArgs] = argv;
  const args = normalizeArgs(rawArgs);
  switch (command) {
    case 'run':
      return run(args);
    case 'batch':
      return batch(args);
    case 'fingerprint':
      return fingerprint(args);
    case 'plan':
      return plan(args);
    case 'demo-feed':
      return demoFeed(args);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`dedup: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      return 2;
  }
}

/**
 * The long-running command exits explicitly once it is done or has failed to
 * start: a client, timer or worker left open by a failed start must not keep
 * a process alive that will never consume (a liveness probe would never
 * restart it). The other commands end when their output is flushed.
 */
const longRunning = process.argv[2] === 'run';
const finish = (code: number): void => {
  process.exitCode = code;
  if (longRunning) process.stderr.write('', () => process.exit(code));
};
main(process.argv.slice(2)).then(finish, (error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`dedup: ${error.message}\n`);
  else if (error instanceof DedupError) process.stderr.write(`dedup: ${error.code}: ${error.message}\n`);
  else process.stderr.write(`dedup: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
  finish(error instanceof DedupError && (error.code === 'USAGE' || error.code === 'CONFIG_INVALID') ? 2 : 1);
});
