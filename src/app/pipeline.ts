/**
 * Wires the application: config in, a running pipeline out, through the
 * start-up of the configured mode; the entry point (cli/main.ts) owns
 * signals and the exit code.
 *
 * Start-up is a short list of named steps. Each step that opens something
 * pushes its closer; if any step fails, everything opened so far is closed in
 * reverse and the error propagates, so a failed start exits instead of
 * leaving a half-started process (a metrics server answering /healthz 200
 * for a pipeline that will never consume).
 *
 * The codec step waits, unready, for a schema registry that does not answer
 * (src/modes/start-common.ts): that is an outage, not a failed start.
 *
 * Each mode has its own start-up (src/modes/single, sharded and routed:
 * start.ts), over the steps they share (src/modes/start-common.ts).
 */
import { Registry } from 'prom-client';
import type { DedupConfig } from '../config.js';
import { DedupError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Closers, type Pipeline } from '../modes/start-common.js';
import { startSingle } from '../modes/single/start.js';
import { startSharded } from '../modes/sharded/start.js';
import { startRouted } from '../modes/routed/start.js';

export type { Pipeline } from '../modes/start-common.js';
export { registryRetryDelayMs } from '../modes/start-common.js';

export async function startPipeline(config: DedupConfig, logger: Logger, registry: Registry = new Registry()): Promise<Pipeline> {
  const closers = new Closers(logger);
  try {
    if (config.mode === 'routed') return await startRouted(config, logger, registry, closers);
    return config.mode === 'sharded' ? await startSharded(config, logger, registry, closers) : await startSingle(config, logger, registry, closers);
  } catch (error) {
    await closers.closeAll();
    throw error instanceof DedupError ? error : new DedupError('KAFKA', `start-up failed: ${(error as Error).message}`, { cause: error });
  }
}
