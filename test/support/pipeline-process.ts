/**
 * Runs the real entry point (`node dist/src/cli/main.js run`) as a child
 * process, as operators run it, so tests can SIGTERM or SIGKILL it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './infra.js';

export const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

export interface PipelineProcess {
  readonly child: ChildProcess;
  readonly metricsUrl: string;
  logs(): string;
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>;
  waitReady(timeoutMs?: number): Promise<void>;
}

export function startPipelineProcess(env: Record<string, string>, metricsPort: number): PipelineProcess {
  const child = spawn(process.execPath, [CLI, 'run'], {
    env: { ...process.env, DEDUP_METRICS_HOST: '127.0.0.1', DEDUP_METRICS_PORT: String(metricsPort), DEDUP_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  return {
    child,
    metricsUrl,
    exited,
    logs: () => output,
    async waitReady(timeoutMs = 120_000) {
      const ready = waitFor(
        'the pipeline to be ready',
        async () => {
          if (exitedYet) return false;
          const response = await fetch(`${metricsUrl}/readyz`).catch(() => null);
          return response?.status === 200 ? true : undefined;
        },
        timeoutMs,
        250,
      );
      // An exit before ready fails at once, not at the deadline.
      const outcome = await Promise.race([ready, exited.then((code) => `exited:${code}`)]).catch((error: Error) => error);
      if (outcome !== true) {
        const why = outcome instanceof Error ? outcome.message : `pipeline ${String(outcome)} before it was ready`;
        throw new Error(`${why}\n--- pipeline output ---\n${output.slice(-4000)}`);
      }
    },
  };
}
