/**
 * Identifiers with an underscore in a page's text (SQLITE_OPEN_EXCLUSIVE,
 * pg_ts_template, GIT_DIR), for the sketch's digest of content numbers and
 * identifiers (feature-sketch.ts). The API pages of two sibling constants,
 * or a help page with one setting's name in place of another's, have the
 * same prose: the tokenizer splits an identifier at its underscores into
 * words both pages share, so only the identifier as a whole tells them apart.
 *
 * Only underscores, not camelCase: brand names are camelCase (an ad for
 * "CloudNimbus" inserted into a page must leave it a near-duplicate), code
 * identifiers with underscores hardly ever are. On the tuning corpus the
 * digest with identifiers turned 5 of the 8 hard negatives the second stage
 * still called duplicates novel (all five renamed an identifier with an
 * underscore), and with camelCase too it also turned 4 of 133 pages with an
 * ad inserted novel.
 *
 * ASCII letters, digits and underscores make up an identifier; invisible
 * characters (a bidi mark, a NUL, a control: char-class.ts) inside it are
 * skipped, as a browser shows nothing for them. The identifier needs an
 * underscore between two of its letters or digits ("__init__" alone is not
 * one). Case is kept: SQLITE_OPEN and sqlite_open are other names.
 */
import { isInvisible } from './char-class.js';
import { fmix, mix } from './feature-hash.js';

const UNDERSCORE = 0x5f;
const SEED_A = 0x1b873593;
const SEED_B = 0x85ebca6b | 0; // as int32, as feature-hash.ts's seeds

/** Per UTF-16 code unit: IDENTIFIER (an ASCII letter, digit or underscore), INVISIBLE (isInvisible), or neither (0). */
const IDENTIFIER = 1;
const INVISIBLE = 2;
const UNIT = new Uint8Array(65536);
for (let c = 0; c < 65536; c++) {
  if ((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === UNDERSCORE) UNIT[c] = IDENTIFIER;
  else if (isInvisible(c)) UNIT[c] = INVISIBLE;
}

/**
 * Reads the run of identifier units of units[0..n) around the underscore at `at`, back to its
 * start and then forward, hashing as it goes. An identifier: writes its hash (two uint32, the
 * invisible characters left out) into out and returns the index just after it. Not one: returns
 * ~(that index), so the caller looks for the next underscore from there.
 */
export function identifierAround(units: Uint16Array, n: number, at: number, out: Uint32Array): number {
  const unit = UNIT;
  // The run of identifier units around this underscore, invisible characters included.
  let start = at;
  while (start > 0 && unit[units[start - 1]!] !== 0) start--;
  let a = SEED_A;
  let b = SEED_B;
  let length = 0;
  let inner = false;
  // The underscores being read follow a letter or a digit.
  let opened = false;
  let previous = 0;
  let end = start;
  for (; end < n; end++) {
    const c = units[end]!;
    const kind = unit[c]!;
    if (kind === 0) break;
    if (kind === INVISIBLE) continue;
    if (c === UNDERSCORE) opened ||= previous !== 0 && previous !== UNDERSCORE;
    else {
      if (opened && previous === UNDERSCORE) inner = true;
      opened = false;
    }
    a = mix(a, c);
    b = mix(b, c);
    length++;
    previous = c;
  }
  if (!inner) return ~end;
  out[0] = fmix(a ^ length);
  out[1] = fmix(b ^ length);
  return end;
}
