/** Shapes of the sweep's results (eval/results/sweep.json) and its constants. */
import type { DistanceSummary } from './analysis.js';
import type { SweepConfig } from './configs.js';
import type { GroupScore, Scores } from '../score.js';

export const K_VALUES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
export const DEFAULT_K = 3;
/** Target: false-positive rate on distinct pages at most 0.1%. */
export const MAX_FPR_ORIGINALS = 0.001;

export interface PointAtK {
  readonly k: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number | null;
  readonly falsePositiveRateOriginals: number | null;
  readonly duplicateRateSubstantive: number | null;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly wrongMatches: number;
  /** Recall per near-duplicate kind; duplicate rate for negative kinds. */
  readonly byKind: Record<string, number | null>;
  readonly byLanguage: Record<string, { precision: number | null; recall: number | null; falsePositiveRateOriginals: number | null }>;
}

export interface ConfigResult {
  readonly name: string;
  /** An eval-side prototype (HTML prepared before fingerprinting): not a product option, never recommended. */
  readonly prototype: boolean;
  readonly what: string;
  readonly change: string;
  readonly options: SweepConfig['options'];
  readonly fingerprintSeconds: number;
  readonly errors: number;
  readonly shortPages: number;
  readonly curve: PointAtK[];
  /** Full scores at the default k. */
  readonly atDefaultK: Scores;
  readonly worstKindAtDefaultK: { kind: string; recall: number } | null;
  readonly meetsFprTarget: boolean;
  /** Decisive distance (needed k for near-duplicates, safe k for the rest) by kind. */
  readonly distancesByKind: Record<string, DistanceSummary>;
}


export interface SecondStagePoint {
  readonly k1: number;
  readonly k2: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number | null;
  readonly falsePositiveRateOriginals: number | null;
  readonly duplicateRateSubstantive: number | null;
  readonly worstKind: { kind: string; recall: number } | null;
  readonly recallByKind: Record<string, number | null>;
  /** Share of hard negatives called duplicate (feature-sketch grid only). */
  readonly hardNegativesCalledDuplicate?: number | null;
}

export interface PlanCostRow {
  readonly k: number;
  readonly n: number;
  readonly blocks: string;
  readonly tables: number;
  readonly minPrefixBits: number;
  readonly candidatesPerProbe: number;
  readonly bytesPerFingerprint: number;
}

/** eval/results/sweep.json */
export interface SweepFile {
  readonly generatedBy: string;
  readonly node: string;
  readonly corpus: { pages: number; sha256: Record<string, string> };
  readonly kValues: readonly number[];
  readonly defaultK: number;
  readonly maxFprOriginals: number;
  readonly recommended: string;
  readonly recommendationReason: string;
  readonly bestRanked: string;
  readonly configs: (Omit<ConfigResult, 'atDefaultK'> & { atDefaultK: Partial<Scores> })[];
  readonly runsOut: {
    readonly config: string;
    readonly wordEditBySize: Record<string, DistanceSummary>;
    readonly substantiveByChange: Record<string, DistanceSummary>;
    readonly chromeByMarkup: Record<string, DistanceSummary>;
    readonly nearDuplicatesByLanguage: Record<string, DistanceSummary>;
  };
  readonly secondStage: { first: string; second: string; grid: SecondStagePoint[] }[];
  /** The CLI's verdicts against the brute force at k; secondStageConfirmed: CLI duplicates of the second stage, compared as the first stage's novel. */
  readonly cliAgreement: { config: string; k: number; secondStageConfirmed?: number; compared: number; same: number; firstDifferences: string[] } | null;
  readonly planCosts: PlanCostRow[];
}

export type { GroupScore };
