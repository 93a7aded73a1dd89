/**
 * Near-duplicate edits of the kinds a crawler meets when it fetches the same
 * document twice: another ad creative, a higher view counter and a new
 * timestamp, session ids and tracking parameters in links, other sidebar
 * widgets, a few words edited, reformatted markup, another URL. None of them
 * changes what a reader of the document gets.
 */
import { randomAd, randomMeta, randomWidget, type Chrome, type PageMeta } from './chrome.js';
import { chromeWords } from './chrome-text.js';
import { CJK_CHAR_RE, joinParts, splitHtml, tagName, type Part } from './html-text.js';
import type { Rng } from './prng.js';

export interface ChromeContext {
  readonly language: string;
  /** Titles of other pages of the site, for "related posts" and teasers. */
  readonly titles: readonly string[];
  /** Day (since 2024-01-01) of the crawl, for timestamps. */
  readonly day: number;
}

/** Another creative in every ad slot, or an ad where there was none; sometimes a banner too. */
export function swapAds(rng: Rng, chrome: Chrome, ctx: ChromeContext): { chrome: Chrome; detail: string } {
  const words = chromeWords(ctx.language);
  let ads = chrome.ads.map((ad) => randomAd(rng, words, ad.slot, ctx.titles));
  let detail = 'swapped';
  if (ads.length === 0) {
    detail = 'inserted';
    const n = rng.int(1, 2);
    for (let i = 0; i < n; i++) ads.push(randomAd(rng, words, rng.pick(['top', 'middle', 'bottom'] as const), ctx.titles));
  } else if (rng.chance(0.3)) {
    detail = 'swapped+added';
    ads = [...ads, randomAd(rng, words, rng.pick(['top', 'bottom'] as const), ctx.titles)];
  }
  return { chrome: { ...chrome, ads }, detail };
}

/** The counter line moves on (more views, a later render time); dates in the page change. */
export function bumpCounters(rng: Rng, chrome: Chrome, ctx: ChromeContext): { chrome: Chrome; detail: string } {
  let meta: PageMeta;
  let detail: string;
  if (chrome.meta === null) {
    meta = randomMeta(rng, ctx.day);
    detail = 'inserted';
  } else {
    const later = randomMeta(rng, ctx.day);
    meta = {
      views: chrome.meta.views + rng.int(1, 5000),
      comments: chrome.meta.comments + (rng.chance(0.3) ? rng.int(1, 3) : 0),
      updated: rng.chance(0.5) ? chrome.meta.updated : later.updated,
      generated: later.generated,
      renderMs: later.renderMs,
    };
    detail = 'changed';
  }
  return { chrome: { ...chrome, meta }, detail };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Dates in the document's own text ("Last updated on Oct 07, 2025", "2022-05-13", "© 2001-2023") move. */
export function shiftDates(rng: Rng, html: string): { html: string; changed: number } {
  let changed = 0;
  const parts = splitHtml(html).map((p): Part => {
    if (p.kind !== 'text' && p.kind !== 'comment') return p;
    let v = p.value.replace(/\b(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b/g, () => {
      changed++;
      return `2025-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
    });
    v = v.replace(/\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\d{1,2}), ((19|20)\d\d)\b/g, () => {
      changed++;
      return `${rng.pick(MONTHS)} ${String(rng.int(1, 28)).padStart(2, '0')}, 2025`;
    });
    v = v.replace(/((?:©|&copy;|Copyright)\s*(?:\d{4}\s*[-–]\s*)?)((19|20)\d\d)/g, (_all, prefix: string) => {
      changed++;
      return `${prefix}${rng.int(2024, 2026)}`;
    });
    return v === p.value ? p : { ...p, value: v };
  });
  return { html: joinParts(parts), changed };
}

/** Other items in the widgets (or new widgets where there were none). */
export function changeWidgets(rng: Rng, chrome: Chrome, ctx: ChromeContext): { chrome: Chrome; detail: string } {
  const words = chromeWords(ctx.language);
  if (chrome.widgets.length === 0) {
    const n = rng.int(1, 2);
    const widgets = Array.from({ length: n }, () => randomWidget(rng, words, rng.chance(0.5) ? 'sidebar' : 'footer', ctx.titles));
    return { chrome: { ...chrome, widgets }, detail: 'inserted' };
  }
  const widgets = chrome.widgets.map((w) => {
    let fresh = randomWidget(rng, words, w.slot, ctx.titles);
    for (let i = 0; i < 8 && fresh.type === w.type && fresh.items.length === 0; i++) fresh = randomWidget(rng, words, w.slot, ctx.titles);
    return fresh;
  });
  if (rng.chance(0.4)) widgets.push(randomWidget(rng, words, rng.chance(0.5) ? 'sidebar' : 'footer', ctx.titles));
  return { chrome: { ...chrome, widgets }, detail: 'changed' };
}

const TRACKING_STYLES = ['jsessionid', 'phpsessid', 'sid', 'utm', 'fbclid', 'gclid'] as const;

function trackingSuffix(rng: Rng, style: (typeof TRACKING_STYLES)[number], session: string): { path: string; query: string } {
  switch (style) {
    case 'jsessionid':
      return { path: `;jsessionid=${session.toUpperCase()}`, query: '' };
    case 'phpsessid':
      return { path: '', query: `PHPSESSID=${session.slice(0, 26)}` };
    case 'sid':
      return { path: '', query: `sid=${session}` };
    case 'utm':
      return { path: '', query: `utm_source=${rng.pick(['newsletter', 'twitter', 'hn', 'reddit'])}&utm_medium=${rng.pick(['email', 'social', 'referral'])}&utm_campaign=${rng.alnum(8)}` };
    case 'fbclid':
      return { path: '', query: `fbclid=IwAR${rng.alnum(40)}` };
    case 'gclid':
      return { path: '', query: `gclid=Cj0KCQ${rng.alnum(30)}&gclsrc=aw.ds` };
  }
}

/** Appends a session path parameter and query parameters; `amp` is '&amp;' inside HTML, '&' in a bare URL. */
export function addTracking(href: string, extra: { path: string; query: string }, amp: string): string {
  const hash = href.indexOf('#');
  const fragment = hash < 0 ? '' : href.slice(hash);
  const rest = hash < 0 ? href : href.slice(0, hash);
  const q = rest.indexOf('?');
  const path = (q < 0 ? rest : rest.slice(0, q)) + extra.path;
  const own = q < 0 ? '' : rest.slice(q + 1);
  const added = extra.query.replace(/&/g, amp);
  const query = own === '' ? added : added === '' ? own : `${own}${amp}${added}`;
  return (query === '' ? path : `${path}?${query}`) + fragment;
}

/** Session ids and tracking parameters in the page's links and in its own URL. */
export function trackLinks(rng: Rng, html: string, url: string): { html: string; url: string; detail: string } {
  const style = rng.pick(TRACKING_STYLES);
  const session = rng.hex(32);
  const share = rng.chance(0.5) ? 1 : rng.next() * 0.6 + 0.3;
  const suffix = trackingSuffix(rng, style, session);
  const parts = splitHtml(html).map((p): Part => {
    if (p.kind !== 'tag' || tagName(p.value) !== 'a') return p;
    const value = p.value.replace(/(\shref\s*=\s*)(["'])([^"']*)\2/i, (all, lead: string, quote: string, href: string) => {
      if (href === '' || href.startsWith('#') || /^(mailto|javascript):/i.test(href) || !rng.chance(share)) return all;
      return `${lead}${quote}${addTracking(href, suffix, '&amp;')}${quote}`;
    });
    return value === p.value ? p : { ...p, value };
  });
  return { html: joinParts(parts), url: addTracking(url, suffix, '&'), detail: style };
}

export { editWords } from './word-edit.js';
export { reformatMarkup } from './reformat.js';

/** The same document at another URL: scheme, host alias, mirror, default port, index file. */
export function aliasUrl(rng: Rng, url: string): { url: string; detail: string } {
  const u = new URL(url);
  const style = rng.pick(['scheme', 'www', 'mirror', 'port', 'double-slash', 'query-order'] as const);
  switch (style) {
    case 'scheme':
      return { url: url.replace(/^https:/, 'http:'), detail: style };
    case 'www':
      return { url: u.hostname.startsWith('www.') ? url.replace('://www.', '://') : url.replace('://', '://www.'), detail: style };
    case 'mirror':
      return { url: `https://mirror.${rng.pick(['example.edu', 'example.org', 'example.net'])}/${u.hostname}${u.pathname}`, detail: style };
    case 'port':
      return { url: `https://${u.hostname}:443${u.pathname}`, detail: style };
    case 'double-slash':
      return { url: `${u.origin}/${u.pathname}`.replace(/([^:])\/\/\//, '$1//'), detail: style };
    case 'query-order':
      return { url: `${u.origin}${u.pathname}?lang=${rng.pick(['en', 'default'])}&v=${rng.int(1, 9)}`, detail: style };
  }
}

export function hasCjk(text: string): boolean {
  return CJK_CHAR_RE.test(text);
}
