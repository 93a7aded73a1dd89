/**
 * Damaged copies of a real page: what broken servers, proxies and truncated
 * fetches do to a page a reader still recognises. Each is a near-duplicate
 * (kind 'damaged') that the product must decide, not refuse. Everything here
 * is well-formed text (a JSON string can carry it): invalid UTF-8 bytes reach
 * the product through the wire layer's lenient decoder, whose U+FFFD
 * replacements the 'replacement' damage stands for.
 */
import { joinParts, splitHtml } from './html-text.js';
import type { Rng } from './prng.js';

export const DAMAGE_KINDS = ['nul', 'controls', 'bidi', 'bom', 'replacement', 'mojibake', 'unterminated-comment', 'unterminated-script'] as const;
export type DamageKind = (typeof DAMAGE_KINDS)[number];

/** Inserts `make()` at about `rate` of the positions of the page's text parts. */
function sprinkle(rng: Rng, html: string, rate: number, make: () => string): string {
  const parts = splitHtml(html);
  for (const p of parts) {
    if (p.kind !== 'text' || p.value.trim() === '') continue;
    let out = '';
    for (const ch of p.value) {
      out += ch;
      if (rng.chance(rate)) out += make();
    }
    p.value = out;
  }
  return joinParts(parts);
}

/** Replaces up to `max` matches of re in text parts with f(match). */
function replaceSome(rng: Rng, html: string, re: RegExp, max: number, f: (m: string) => string): string {
  const parts = splitHtml(html);
  let left = max;
  for (const p of rng.shuffle(parts.filter((x) => x.kind === 'text'))) {
    if (left <= 0) break;
    p.value = p.value.replace(re, (m) => (left-- > 0 && rng.chance(0.5) ? f(m) : m));
  }
  return joinParts(parts);
}

function afterHead(html: string, insert: string): string {
  const m = /<head\b[^>]*>/i.exec(html);
  return m === null ? insert + html : html.slice(0, m.index + m[0].length) + insert + html.slice(m.index + m[0].length);
}

/** Latin-1 reading of the UTF-8 bytes of s ("é" -> "Ã©"). */
function mojibake(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

export function damagePage(rng: Rng, html: string): { html: string; detail: DamageKind } {
  const kind = rng.pick(DAMAGE_KINDS);
  switch (kind) {
    case 'nul':
      return { html: sprinkle(rng, html, 1 / 400, () => '\u0000'), detail: kind };
    case 'controls':
      return { html: sprinkle(rng, html, 1 / 400, () => rng.pick(['\u0001', '\u0007', '\u001b', '\u007f', '\u0085'])), detail: kind };
    case 'bidi':
      return { html: sprinkle(rng, html, 1 / 300, () => rng.pick(['\u200e', '\u200f', '\u202a', '\u202c', '\u202e', '\u2066', '\u2069', '\ufeff', '\u00ad', '\u200d'])), detail: kind };
    case 'bom':
      return { html: '\ufeff' + html, detail: kind };
    case 'replacement':
      return { html: replaceSome(rng, html, /[^\u0000-\u007f]|[a-z]/gu, 8, () => '\ufffd'), detail: kind };
    case 'mojibake':
      return { html: replaceSome(rng, html, /[^\u0000-\u007f]+/gu, 12, mojibake), detail: kind };
    case 'unterminated-comment':
      return { html: afterHead(html, '<!-- cut here by a broken proxy '), detail: kind };
    case 'unterminated-script':
      return { html: afterHead(html, '<script>var tracker = "'), detail: kind };
  }
}
