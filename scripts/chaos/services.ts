/**
 * The processes a chaos run abuses: the pipeline (run as operators run it,
 * `node dist/src/cli/main.js run`, restarted by a small supervisor the way
 * Kubernetes would) and the broker and registry that deploy/local/up.sh
 * started (killed by the PID up.sh recorded, restarted with the same command
 * line, the new PID recorded where deploy/local/down.sh looks for it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check().catch(() => false)) return Date.now() - started;
    await sleep(everyMs);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

export async function httpOk(url: string, timeoutMs = 2000): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).catch(() => null);
  return response?.status === 200;
}

export interface PipelineEvents {
  /** Exits we did not cause (crashes, start-up failures), with their exit codes. */
  unexpectedExits: { at: number; code: string }[];
  /** Processes alive but still not ready after the start-up deadline, killed and started again. */
  startupHangs: { at: number }[];
  starts: number;
}

/**
 * Keeps one pipeline process running: restarts it one second after any exit
 * we did not ask for, as a supervisor would, and records that exit. A process
 * that stays alive but not ready past the start-up deadline is killed and
 * started again (a Kubernetes startup probe on /readyz), and recorded too:
 * without that, a start-up that hangs would stop the run.
 */
export function createPipelineSupervisor(options: { cli: string; env: Record<string, string>; logFile: string; metricsUrl: string; startupDeadlineMs: number }) {
  let child: ChildProcess | null = null;
  let childStartedAt = 0;
  let exited: Promise<void> = Promise.resolve();
  let expectingExit = false;
  let stopped = false;
  const events: PipelineEvents = { unexpectedExits: [], startupHangs: [], starts: 0 };

  function start(): void {
    const log = openSync(options.logFile, 'a');
    const proc = spawn(process.execPath, [options.cli, 'run'], { env: { ...process.env, ...options.env }, stdio: ['ignore', log, log] });
    closeSync(log);
    child = proc;
    childStartedAt = Date.now();
    events.starts++;
    exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        if (child === proc) child = null;
        if (!expectingExit && !stopped) {
          events.unexpectedExits.push({ at: Date.now(), code: String(code ?? signal) });
          setTimeout(() => {
            if (!stopped && child === null) start();
          }, 1000);
        }
        resolve();
      });
    });
  }

  /** SIGKILL, and no restart until start() is called. */
  async function kill(): Promise<void> {
    if (!child) return;
    expectingExit = true;
    child.kill('SIGKILL');
    await exited;
    expectingExit = false;
  }

  async function killAndRestart(): Promise<void> {
    await kill();
    start();
  }

  return {
    events,
    get pid(): number | null {
      return child?.pid ?? null;
    },
    start,
    async ready(timeoutMs: number): Promise<number> {
      const begun = Date.now();
      while (Date.now() - begun < timeoutMs) {
        if (await httpOk(`${options.metricsUrl}/readyz`)) return Date.now() - begun;
        if (child && Date.now() - childStartedAt > options.startupDeadlineMs) {
          events.startupHangs.push({ at: Date.now() });
          await killAndRestart();
        }
        await sleep(250);
      }
      throw new Error(`the pipeline to be ready: not within ${timeoutMs} ms`);
    },
    /** SIGKILL and start again at once: the crash under test. */
    killAndRestart,
    kill,
    /** Graceful stop (SIGTERM: commit, snapshot), SIGKILL after the grace period. */
    async stop(graceMs = 30_000): Promise<void> {
      stopped = true;
      const proc = child;
      if (!proc) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export type PipelineSupervisor = ReturnType<typeof createPipelineSupervisor>;

/** A service of the local stack, by the PID file up.sh wrote in the state directory. */
export function stackService(stateDir: string, name: 'kafka' | 'registry') {
  const pidFile = join(stateDir, `${name}.pid`);
  const pid = (): number => Number(readFileSync(pidFile, 'utf8').trim());
  let argv: string[] | null = null;
  let cwd = '/';

  function alive(p: number): boolean {
    try {
      process.kill(p, 0);
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      return !/^State:\s+Z/m.test(status);
    } catch {
      return false;
    }
  }

  return {
    name,
    pid,
    signal(signal: NodeJS.Signals): void {
      process.kill(pid(), signal);
    },
    /** SIGKILL, remembering the command line to start it again with. */
    async kill(): Promise<void> {
      const p = pid();
      const cmdline = readFileSync(`/proc/${p}/cmdline`);
      argv = cmdline.toString('utf8').split('\0').filter((a) => a.length > 0);
      if (!argv.some((a) => a.includes(stateDir))) throw new Error(`pid ${p} in ${pidFile} is not a process of this stack`);
      cwd = readlinkSync(`/proc/${p}/cwd`);
      process.kill(p, 'SIGKILL');
      await waitUntil(`${name} (pid ${p}) to die`, async () => !alive(p), 10_000, 100);
    },
    /** Starts the same command line again, detached, logging where up.sh logged; records the new PID. */
    restart(): number {
      if (!argv) throw new Error(`${name} was not killed by this run`);
      const log = openSync(join(stateDir, 'logs', `${name}.out`), 'a');
      const proc = spawn(argv[0]!, argv.slice(1), { cwd, detached: true, stdio: ['ignore', log, log] });
      closeSync(log);
      proc.unref();
      writeFileSync(pidFile, `${proc.pid}\n`);
      return proc.pid!;
    },
  };
}
