/**
 * Where the deploy checks find their tools. A missing tool fails the check
 * that needs it, with the command that installs it: nothing is skipped.
 * deploy/local/check-tools.sh installs them (npm test runs it through up.sh).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const INSTALL = 'run `bash deploy/local/check-tools.sh` (npm test runs it through deploy/local/up.sh)';

function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { encoding: 'utf8' }).status === 0;
}

/** promtool, from Debian's prometheus package. */
export function promtool(): { command: string } | { missing: string } {
  return runs('promtool', ['--version']) ? { command: 'promtool' } : { missing: `promtool is not installed: ${INSTALL}, or apt-get install prometheus` };
}

/** `kubectl kustomize`, else the kustomize binary on PATH or in the infra cache where check-tools.sh builds it. */
export function kustomize(): { command: string; args: string[] } | { missing: string } {
  if (runs('kubectl', ['kustomize', '--help'])) return { command: 'kubectl', args: ['kustomize'] };
  if (runs('kustomize', ['version'])) return { command: 'kustomize', args: ['build'] };
  const cache = process.env.INFRA_CACHE_DIR || join(homedir(), '.cache', 'simhash-dedup-infra');
  const built = join(cache, 'bin', 'kustomize');
  if (existsSync(built) && runs(built, ['version'])) return { command: built, args: ['build'] };
  return { missing: `neither kubectl nor kustomize is installed (looked on PATH and in ${built}): ${INSTALL}` };
}
