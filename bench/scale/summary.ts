/**
 * Per-case medians of the throughput runs. Ratios to the passthrough are
 * taken per repetition (each case against the passthrough run of the same
 * repetition, minutes apart on the same broker and input), then the median.
 * CPU figures are per page decided in the window; wall figures are per page
 * over the whole run, from the processes' histograms.
 */
import { median, round } from '../pipeline/common.js';
import type { ScaleThroughputRun } from './throughput.js';

export interface CaseSummary {
  case: string;
  instances: number;
  runs: number;
  pagesPerSecond: number;
  runsPagesPerSecond: number[];
  ratioToPassthrough: number | null;
  /** CPU (from /proc), ms per page, in the window. */
  cpuMsPerPage: { instances: number; mainThreads: number; otherThreads: number; broker: number; registry: number };
  /** Cores over the window. */
  cores: { instances: number; machineBusy: number; otherLoad: number };
  /** Wall time (from the histograms), ms per page, summed over the instances. */
  wallMsPerPage: { chunk: number; fingerprint: number; probe: number; answerWait: number };
  sequenceRecordsAppliedPerPage: number;
  pagesPerTransaction: number;
  duplicateShare: number;
  maxRebalancesInWindow: number;
  maxPagesBeforeAllReady: number;
  /** Spawn to the last instance's /readyz 200, s (median over runs). */
  allReadySeconds: number;
}

const perPage = (seconds: number | null, pages: number): number | null => (seconds === null || pages <= 0 ? null : (seconds * 1000) / pages);

export function summarizeThroughput(runs: readonly ScaleThroughputRun[], cases: readonly string[]): CaseSummary[] {
  const out: CaseSummary[] = [];
  for (const name of cases) {
    const of = runs.filter((r) => r.case === name);
    if (of.length === 0) continue;
    const m = (f: (r: ScaleThroughputRun) => number | null, digits: number): number => round(median(of.map(f).filter((x): x is number => x !== null && Number.isFinite(x))), digits);
    const ratios = of
      .map((r) => {
        const base = runs.find((x) => x.case === 'passthrough' && x.repetition === r.repetition);
        return base ? r.pagesPerSecond / base.pagesPerSecond : null;
      })
      .filter((x): x is number => x !== null);
    out.push({
      case: name,
      instances: of[0]!.instances,
      runs: of.length,
      pagesPerSecond: m((r) => r.pagesPerSecond, 1),
      runsPagesPerSecond: of.map((r) => round(r.pagesPerSecond, 1)),
      ratioToPassthrough: ratios.length ? round(median(ratios), 3) : null,
      cpuMsPerPage: {
        instances: m((r) => perPage(r.cpuSeconds.instances, r.pagesInWindow), 3),
        mainThreads: m((r) => perPage(r.cpuSeconds.instancesMainThreads, r.pagesInWindow), 3),
        otherThreads: m((r) => (r.cpuSeconds.instances === null || r.cpuSeconds.instancesMainThreads === null ? null : perPage(r.cpuSeconds.instances - r.cpuSeconds.instancesMainThreads, r.pagesInWindow)), 3),
        broker: m((r) => perPage(r.cpuSeconds.kafka, r.pagesInWindow), 3),
        registry: m((r) => perPage(r.cpuSeconds.registry, r.pagesInWindow), 3),
      },
      cores: {
        instances: m((r) => (r.cpuSeconds.instances === null ? null : r.cpuSeconds.instances / r.windowSeconds), 2),
        machineBusy: m((r) => (r.cpuSeconds.machineBusy === null ? null : r.cpuSeconds.machineBusy / r.windowSeconds), 2),
        otherLoad: m((r) => {
          const c = r.cpuSeconds;
          if (c.machineBusy === null || c.instances === null || c.kafka === null || c.registry === null) return null;
          return Math.max(0, c.machineBusy - c.instances - c.kafka - c.registry) / r.windowSeconds;
        }, 2),
      },
      wallMsPerPage: {
        chunk: m((r) => perPage(r.wallSeconds.chunks, r.pagesCounted), 3),
        fingerprint: m((r) => perPage(r.wallSeconds.fingerprint, r.pagesCounted), 3),
        probe: m((r) => perPage(r.wallSeconds.probe, r.pagesCounted), 3),
        answerWait: m((r) => perPage(r.wallSeconds.answerWait, r.pagesCounted), 3),
      },
      sequenceRecordsAppliedPerPage: m((r) => (r.pagesCounted > 0 ? r.sequenceRecordsApplied / r.pagesCounted : null), 2),
      pagesPerTransaction: m((r) => (r.transactions > 0 ? r.pagesCounted / r.transactions : null), 1),
      duplicateShare: m((r) => (r.pagesCounted > 0 ? r.duplicates / r.pagesCounted : null), 3),
      maxRebalancesInWindow: Math.max(...of.map((r) => r.rebalancesInWindow)),
      maxPagesBeforeAllReady: Math.max(...of.map((r) => r.pagesBeforeAllReady)),
      allReadySeconds: m((r) => Math.max(...r.readySeconds), 2),
    });
  }
  return out;
}
