/**
 * Composes the labelled stream from the originals: each original gets page
 * chrome, some get near-duplicates and substantive edits placed LATER in the
 * stream, hostile pages are scattered in, and every page gets an id and a
 * fetch time in stream order. Everything is derived from the seed.
 */
import { NO_CHROME, randomChrome, randomMarkup, renderWithChrome, type Chrome } from './chrome.js';
import { aliasUrl, bumpCounters, changeWidgets, editWords, reformatMarkup, shiftDates, swapAds, trackLinks, type ChromeContext } from './edits.js';
import { damagePage } from './damage.js';
import { hardNegative } from './hard-negative.js';
import { hostilePages } from './hostile.js';
import { textTokens, visibleText } from './html-text.js';
import type { Original } from './originals.js';
import { Rng } from './prng.js';
import { substantiveEdit, type SubstantiveEdit } from './substantive.js';
import { partlyUntranslated } from './untranslated.js';
import type { GeneratedNearDuplicateKind, Label, Page } from '../labels.js';

export interface ComposeOptions {
  readonly seed: string;
  /** Near-duplicates per original: weights of 0, 1, 2. */
  readonly nearDuplicates: readonly [number, number, number];
  /** Chance that an original also gets a substantive edit. */
  readonly substantiveRate: number;
  /** How far after its source (in originals) a derived page may land. */
  readonly maxLag: number;
  /** Chance that an original also gets a hard negative (a sibling with other versions and identifiers). */
  readonly hardNegativeRate?: number;
  /**
   * Replacements a hard negative needs outside the page's own chrome (see
   * hardNegative); fewer and it is not made. Unset: no such check.
   */
  readonly hardNegativeMinContentChanges?: number;
  /**
   * Chance that an original of a translated doc set (one whose source page is
   * known) also gets a partly untranslated version (untranslated.ts). Drawn
   * from a generator of its own, so a stream without it is the same as before.
   */
  readonly partlyUntranslatedRate?: number;
}

export const DEFAULT_COMPOSE: ComposeOptions = { seed: 'simhash-eval-v1', nearDuplicates: [0.35, 0.45, 0.2], substantiveRate: 0.16, maxLag: 400, hardNegativeRate: 0.15 };

const KIND_WEIGHTS: readonly (readonly [GeneratedNearDuplicateKind, number])[] = [
  ['exact-copy', 0.6],
  ['url-alias', 0.6],
  ['reformat', 1],
  ['session-tracking', 1],
  ['counter-timestamp', 1],
  ['ad-banner', 1],
  ['widget', 1],
  ['word-edit', 1],
  ['mixed', 1],
  ['damaged', 0.8],
];

const MIXABLE = ['ad-banner', 'counter-timestamp', 'widget', 'session-tracking', 'reformat'] as const;

interface Pending {
  readonly pos: number;
  readonly html: string;
  readonly url: string;
  readonly label: Omit<Label, 'id' | 'sourceId'> & { readonly source: number | null };
}

function host(url: string): string {
  return new URL(url).hostname;
}

function nearDuplicate(rng: Rng, kind: GeneratedNearDuplicateKind, o: Original, chrome: Chrome, ctx: ChromeContext): { html: string; url: string; detail: string | null } | null {
  const render = (raw: string, c: Chrome): string => renderWithChrome(raw, c, o.set.language, host(o.url));
  switch (kind) {
    case 'exact-copy':
      return { html: render(o.raw, chrome), url: o.url, detail: null };
    case 'url-alias': {
      const a = aliasUrl(rng, o.url);
      return { html: render(o.raw, chrome), url: a.url, detail: a.detail };
    }
    case 'ad-banner': {
      const e = swapAds(rng, chrome, ctx);
      return { html: render(o.raw, e.chrome), url: o.url, detail: e.detail };
    }
    case 'counter-timestamp': {
      const e = bumpCounters(rng, chrome, ctx);
      const d = shiftDates(rng, o.raw);
      return { html: render(d.html, e.chrome), url: o.url, detail: d.changed > 0 ? `${e.detail}+dates` : e.detail };
    }
    case 'widget': {
      const e = changeWidgets(rng, chrome, ctx);
      return { html: render(o.raw, e.chrome), url: o.url, detail: e.detail };
    }
    case 'session-tracking': {
      const t = trackLinks(rng, render(o.raw, chrome), o.url);
      return { html: t.html, url: t.url, detail: t.detail };
    }
    case 'word-edit': {
      const e = editWords(rng, o.raw);
      return e === null ? null : { html: render(e.html, chrome), url: o.url, detail: e.detail };
    }
    case 'reformat': {
      const r = reformatMarkup(rng, render(o.raw, chrome));
      return { html: r.html, url: o.url, detail: r.detail };
    }
    case 'damaged': {
      const d = damagePage(rng, render(o.raw, chrome));
      return { html: d.html, url: o.url, detail: d.detail };
    }
    case 'mixed': {
      const chosen = new Set(rng.shuffle(MIXABLE).slice(0, rng.int(2, 4)));
      let c = chrome;
      let raw = o.raw;
      if (chosen.has('ad-banner')) c = swapAds(rng, c, ctx).chrome;
      if (chosen.has('counter-timestamp')) {
        c = bumpCounters(rng, c, ctx).chrome;
        raw = shiftDates(rng, raw).html;
      }
      if (chosen.has('widget')) c = changeWidgets(rng, c, ctx).chrome;
      let html = render(raw, c);
      let url = o.url;
      if (chosen.has('session-tracking')) ({ html, url } = trackLinks(rng, html, url));
      if (chosen.has('reformat')) html = reformatMarkup(rng, html).html;
      return { html, url, detail: MIXABLE.filter((k) => chosen.has(k)).join('+') };
    }
  }
}

export interface Corpus {
  readonly pages: Page[];
  readonly labels: Label[];
}

export function compose(originals: readonly Original[], options: ComposeOptions = DEFAULT_COMPOSE): Corpus {
  const { seed } = options;
  const order = Rng.derive(seed, 'stream-order').shuffle(originals.map((_, i) => i));
  const titlesBySite = new Map<string, string[]>();
  for (const o of originals) {
    const list = titlesBySite.get(o.set.key) ?? [];
    if (o.title !== '') list.push(o.title);
    titlesBySite.set(o.set.key, list);
  }
  const bySet = new Map<string, number[]>();
  originals.forEach((o, i) => bySet.set(o.set.key, [...(bySet.get(o.set.key) ?? []), i]));

  const pending: Pending[] = [];
  const n = order.length;
  order.forEach((oi, pos) => {
    const o = originals[oi]!;
    const rng = Rng.derive(seed, `original/${o.set.key}/${o.relPath}`);
    const titles = titlesBySite.get(o.set.key) ?? [];
    const chrome = rng.chance(0.8) ? randomChrome(rng, o.set.language, titles, Math.floor(pos / 8)) : { ...NO_CHROME, markup: randomMarkup(rng) };
    const cluster = `c${String(pos).padStart(5, '0')}`;
    const base = { site: o.set.site, language: o.set.language, chromeMarkup: chrome.markup, changedFraction: null };
    pending.push({ pos, html: renderWithChrome(o.raw, chrome, o.set.language, host(o.url)), url: o.url, label: { ...base, cluster, kind: 'original', detail: null, source: null } });

    const later = (): number => pos + 0.5 + rng.next() * Math.min(options.maxLag, n - pos + 20);
    const count = rng.weighted([[0, options.nearDuplicates[0]], [1, options.nearDuplicates[1]], [2, options.nearDuplicates[2]]] as const);
    for (let d = 0; d < count; d++) {
      const kind = rng.weighted(KIND_WEIGHTS);
      const at = later();
      const made = nearDuplicate(rng, kind, o, chrome, { language: o.set.language, titles, day: Math.floor(at / 8) });
      if (made === null) continue;
      pending.push({ pos: at, html: made.html, url: made.url, label: { ...base, cluster, kind, detail: made.detail, source: pos } });
    }
    if (rng.chance(options.substantiveRate)) {
      const peers = (bySet.get(o.set.key) ?? []).filter((i) => i !== oi);
      const edit = rng.pick(['paragraphs-rewritten', 'section-added', 'section-removed'] as const satisfies readonly SubstantiveEdit[]);
      const fraction = 0.1 + rng.next() * 0.4;
      const donor = peers.length === 0 ? null : originals[rng.pick(peers)]!;
      const made = donor === null ? null : substantiveEdit(rng, o.raw, donor.raw, edit, fraction);
      if (made !== null) {
        pending.push({
          pos: later(),
          html: renderWithChrome(made.html, chrome, o.set.language, host(o.url)),
          url: o.url,
          label: { ...base, cluster: `${cluster}-s`, kind: 'substantive-edit', detail: made.edit, changedFraction: Math.round(made.changedFraction * 1000) / 1000, source: pos },
        });
      }
    }
    if (rng.chance(options.hardNegativeRate ?? 0)) {
      const peers = (bySet.get(o.set.key) ?? []).filter((i) => i !== oi);
      const donor = peers.length === 0 ? null : originals[rng.pick(peers)]!;
      const made = donor === null ? null : hardNegative(rng, o.raw, donor.raw);
      if (made !== null && made.contentChanges >= (options.hardNegativeMinContentChanges ?? 0)) {
        pending.push({
          pos: later(),
          html: renderWithChrome(made.html, chrome, o.set.language, host(o.url)),
          url: o.url.replace(/(\.html?)?$/, '-sibling$1'),
          label: { ...base, cluster: `${cluster}-h`, kind: 'hard-negative', detail: made.detail, source: pos },
        });
      }
    }
    const untranslatedRate = options.partlyUntranslatedRate ?? 0;
    if (untranslatedRate > 0 && o.translatedFrom !== undefined && o.set.translates !== undefined) {
      const own = Rng.derive(seed, `partly-untranslated/${o.set.key}/${o.relPath}`);
      const made = own.chance(untranslatedRate) ? partlyUntranslated(own, o.raw, o.translatedFrom, o.set.translates) : null;
      if (made !== null) {
        pending.push({
          pos: pos + 0.5 + own.next() * Math.min(options.maxLag, n - pos + 20),
          html: renderWithChrome(made.html, chrome, o.set.language, host(o.url)),
          url: o.url,
          label: { ...base, cluster, kind: 'partly-untranslated', detail: `${made.paragraphs.length} paragraph${made.paragraphs.length === 1 ? '' : 's'}`, changedFraction: Math.round(made.changedFraction * 1000) / 1000, source: pos },
        });
      }
    }
  });

  const hostileRng = Rng.derive(seed, 'hostile');
  const vocab = [...new Set(originals.slice(0, 200).flatMap((o) => textTokens(visibleText(o.raw)).filter((t) => t.length > 3)))].sort().slice(0, 5000);
  const bodies = originals.filter((o) => o.set.language === 'en').slice(0, 60).map((o) => o.raw.replace(/^[\s\S]*?<body[^>]*>|<\/body>[\s\S]*$/gi, ''));
  hostilePages(hostileRng, vocab, bodies).forEach((h, i) => {
    pending.push({
      pos: hostileRng.next() * n,
      html: h.html,
      url: `https://www.example.com/crawl-trap/${i}/${h.detail}`,
      label: { cluster: `h${String(i).padStart(3, '0')}`, kind: 'hostile', site: 'hostile', language: 'und', chromeMarkup: null, detail: h.detail, changedFraction: null, source: null },
    });
  });

  pending.sort((a, b) => a.pos - b.pos);
  const idOfPos = new Map<number, string>();
  const timeRng = Rng.derive(seed, 'fetch-times');
  let t = Date.UTC(2025, 2, 1);
  const pages: Page[] = [];
  const labels: Label[] = [];
  pending.forEach((p, i) => {
    const id = `page-${String(i + 1).padStart(6, '0')}`;
    if (p.label.kind === 'original') idOfPos.set(p.pos, id);
    t += timeRng.int(1000, 30000);
    pages.push({ id, url: p.url, html: p.html, fetchedAt: new Date(t).toISOString() });
    const { source, ...rest } = p.label;
    const sourceId = source === null ? null : idOfPos.get(source) ?? null;
    if (source !== null && sourceId === null) throw new Error(`derived page ${id} precedes its source`);
    labels.push({ id, ...rest, sourceId });
  });
  return { pages, labels };
}
