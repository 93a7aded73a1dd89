/**
 * The fingerprint definition is part of persisted state: fingerprints in a
 * snapshot or changelog are only comparable with new ones computed by the
 * same definition. fingerprintVersion names that definition, for the snapshot
 * header and the changelog:
 *
 *   simhash-v<DEFINITION>;<feature options>;unicode-<process.versions.unicode>[;sketch-v<N>]
 *
 * - DEFINITION is bumped with every change of the golden vectors
 *   (test/unit/fingerprint/golden-vectors.json); golden.test.ts fails when
 *   the vectors change and this constant does not.
 * - The feature options change features and weights.
 * - The engine's Unicode version drives the character classes (char-class.ts
 *   reads \p{L}, \p{N}, \p{Script=Han} from the engine), so a Node upgrade
 *   with new Unicode data can move fingerprints of pages using new characters.
 *
 * Two runs whose versions differ must not share an index.
 */
import type { FeatureOptions } from './fingerprinter.js';

/** Bumped with every change of the golden vectors. */
export const FINGERPRINT_DEFINITION = 13;

/** Bumped with every change of the feature sketch (feature-sketch.ts), which a second stage stores per page. */
export const SKETCH_DEFINITION = 8;

/** sketches: the state keeps feature sketches (the second stage is on), so their definition is part of it too. */
export function fingerprintVersion(options: Readonly<FeatureOptions>, sketches = false): string {
  const o = options;
  const features = [
    `shingle=${o.shingleSize}`,
    `boilerplate=${o.boilerplate}`,
    `cjk=${o.cjk}`,
    `weighting=${o.weighting}`,
    `stopWords=${o.stopWords ? 1 : 0}`,
    `minFeatures=${o.minFeatures}`,
  ].join(',');
  const sketch = sketches ? `;sketch-v${SKETCH_DEFINITION}` : '';
  return `simhash-v${FINGERPRINT_DEFINITION};${features};unicode-${process.versions.unicode ?? 'unknown'}${sketch}`;
}
