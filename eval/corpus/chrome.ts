/**
 * Page chrome around the real content: ad slots, a site banner, a counter
 * and timestamp line, sidebar and footer widgets. A page is rendered as
 * raw document + chrome state, so a re-crawl can change the chrome (another
 * ad creative, a higher view counter, other "recent posts") and nothing else.
 * The markup imitates what ad servers and CMS themes really emit.
 */
import { escapeHtml } from './markup.js';
import type { Rng } from './prng.js';
import { chromeWords, type ChromeWords } from './chrome-text.js';

export type AdFormat = 'leaderboard' | 'adsense' | 'native' | 'banner';
export type Slot = 'top' | 'middle' | 'bottom';
export type WidgetType = 'recent' | 'popular' | 'related' | 'tags' | 'newsletter' | 'social';

export interface Ad {
  readonly slot: Slot;
  readonly format: AdFormat;
  readonly brand: string;
  readonly product: string;
  readonly offer: string;
  readonly cta: string;
  readonly campaign: string;
  readonly creativeId: number;
  /** Teaser titles (native format). */
  readonly teasers: readonly string[];
}

export interface PageMeta {
  readonly views: number;
  readonly comments: number;
  /** ISO date. */
  readonly updated: string;
  /** ISO date-time. */
  readonly generated: string;
  readonly renderMs: number;
}

export interface Widget {
  readonly slot: 'sidebar' | 'footer';
  readonly type: WidgetType;
  readonly items: readonly string[];
}

/**
 * How the theme marks its chrome up: 'semantic' names it (class="ad-slot",
 * <aside class="widget">, <time>), as most ad servers and CMS themes do;
 * 'opaque' hides it behind generated class names and plain <div>s (CSS
 * modules, styled-components, anti-adblock), so only the text is left to
 * tell content from chrome.
 */
export type ChromeMarkup = 'semantic' | 'opaque';

export interface Chrome {
  readonly markup: ChromeMarkup;
  readonly ads: readonly Ad[];
  readonly meta: PageMeta | null;
  readonly widgets: readonly Widget[];
}

export const NO_CHROME: Chrome = { markup: 'semantic', ads: [], meta: null, widgets: [] };

export const OPAQUE_SHARE = 0.3;

export function randomMarkup(rng: Rng): ChromeMarkup {
  return rng.chance(OPAQUE_SHARE) ? 'opaque' : 'semantic';
}

export function randomAd(rng: Rng, words: ChromeWords, slot: Slot, titles: readonly string[]): Ad {
  return {
    slot,
    format: rng.pick(['leaderboard', 'adsense', 'native', 'banner'] as const),
    brand: rng.pick(words.brands),
    product: rng.pick(words.products),
    offer: rng.pick(words.offers),
    cta: rng.pick(words.ctas),
    campaign: rng.alnum(10),
    creativeId: rng.int(100000000, 999999999),
    teasers: titles.length === 0 ? [] : [rng.pick(titles), rng.pick(titles)],
  };
}

export function randomMeta(rng: Rng, day: number): PageMeta {
  const date = new Date(Date.UTC(2024, 0, 1) + day * 86400000 + rng.int(0, 86399) * 1000);
  return {
    views: rng.int(10, 250000),
    comments: rng.int(0, 140),
    updated: new Date(date.getTime() - rng.int(1, 900) * 86400000).toISOString().slice(0, 10),
    generated: date.toISOString().slice(0, 19).replace('T', ' '),
    renderMs: rng.int(3, 900),
  };
}

export function randomWidget(rng: Rng, words: ChromeWords, slot: 'sidebar' | 'footer', titles: readonly string[]): Widget {
  const type = rng.pick(['recent', 'popular', 'related', 'tags', 'newsletter', 'social'] as const);
  let items: string[];
  if (type === 'tags') items = rng.shuffle(words.tags).slice(0, rng.int(5, 9));
  else if (type === 'newsletter' || type === 'social') items = [];
  else items = titles.length === 0 ? [] : Array.from({ length: rng.int(4, 8) }, () => rng.pick(titles));
  return { slot, type, items };
}

/** Random chrome for an original page: most pages carry some, many none. */
export function randomChrome(rng: Rng, language: string, titles: readonly string[], day: number): Chrome {
  const words = chromeWords(language);
  const ads: Ad[] = [];
  if (rng.chance(0.55)) {
    ads.push(randomAd(rng, words, rng.pick(['top', 'middle', 'bottom'] as const), titles));
    if (rng.chance(0.3)) ads.push(randomAd(rng, words, rng.pick(['top', 'middle', 'bottom'] as const), titles));
  }
  const meta = rng.chance(0.6) ? randomMeta(rng, day) : null;
  const widgets: Widget[] = [];
  if (rng.chance(0.45)) widgets.push(randomWidget(rng, words, rng.chance(0.5) ? 'sidebar' : 'footer', titles));
  return { markup: randomMarkup(rng), ads, meta, widgets };
}

function slugify(text: string): string {
  return encodeURIComponent(text.toLowerCase().replace(/\s+/g, '-').slice(0, 40));
}

function renderAd(ad: Ad, words: ChromeWords): string {
  const click = `https://adclick.g.doubleclick.net/pcs/click?xai=AKAOjs${ad.campaign}&sig=Cg0ArKJSz${ad.creativeId}&adurl=https://www.${ad.brand.toLowerCase().replace(/[^a-z]/g, '') || 'shop'}.example/promo%3Futm_source%3Ddisplay%26utm_campaign%3D${ad.campaign}`;
  const text = `${escapeHtml(ad.brand)}: ${escapeHtml(ad.product)} — ${escapeHtml(ad.offer)}`;
  switch (ad.format) {
    case 'leaderboard':
      return `<div class="ad-slot ad-leaderboard" id="div-gpt-ad-${ad.creativeId}-0" data-ad-unit="/21775744923/docs/${ad.slot}" style="min-width:728px;min-height:90px"><script>googletag.cmd.push(function(){googletag.display("div-gpt-ad-${ad.creativeId}-0");});</script><a href="${click}" target="_blank" rel="nofollow sponsored"><img src="https://tpc.googlesyndication.com/simgad/${ad.creativeId}" width="728" height="90" alt="${text}"></a><span class="ad-label">${words.ad}</span></div>`;
    case 'adsense':
      return `<div class="ad-container"><span class="ad-label">${words.ad}</span><ins class="adsbygoogle" style="display:block" data-ad-client="ca-pub-${ad.creativeId}${ad.creativeId % 10000}" data-ad-slot="${ad.creativeId % 100000}" data-ad-format="auto" data-full-width-responsive="true"></ins><script>(adsbygoogle = window.adsbygoogle || []).push({});</script><div class="ad-text"><a href="${click}" rel="nofollow sponsored">${text}</a> <a class="ad-cta" href="${click}" rel="nofollow sponsored">${escapeHtml(ad.cta)}</a></div></div>`;
    case 'native': {
      const teasers = ad.teasers.map((t) => `<li><a href="https://native.example-ads.net/r/${ad.campaign}/${slugify(t)}">${escapeHtml(t)}</a></li>`).join('');
      return `<div class="native-ad" data-widget-id="${ad.campaign}"><p class="native-ad-label">${words.sponsored} · ${escapeHtml(ad.brand)}</p><a href="${click}" rel="nofollow sponsored"><img src="https://cdn.example-ads.net/i/${ad.creativeId}.jpg" alt=""><strong>${text}</strong></a><ul>${teasers}</ul></div>`;
    }
    case 'banner':
      return `<div class="site-banner promo-banner" role="banner"><a href="${click}" rel="nofollow sponsored">${text}. ${escapeHtml(ad.cta)} »</a><button class="banner-close" aria-label="close">×</button></div>`;
  }
}

function renderMeta(meta: PageMeta, words: ChromeWords): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  return `<div class="page-meta"><span class="views">${words.views(n(meta.views))}</span> · <span class="comments-count">${words.comments(n(meta.comments))}</span> · <time datetime="${meta.updated}">${words.updated(meta.updated)}</time></div>`;
}

function renderWidget(widget: Widget, words: ChromeWords, siteHost: string): string {
  const title = words.widgetTitles[widget.type];
  let body: string;
  if (widget.type === 'tags') {
    body = `<div class="tagcloud">${widget.items.map((t) => `<a href="https://${siteHost}/tag/${slugify(t)}" class="tag-link">${escapeHtml(t)}</a>`).join(' ')}</div>`;
  } else if (widget.type === 'newsletter') {
    body = `<form action="https://${siteHost}/newsletter/subscribe" method="post"><p>${words.newsletter.map(escapeHtml).join(' ')}</p><input type="email" name="email" placeholder="you@example.com"><button type="submit">${words.subscribe}</button></form>`;
  } else if (widget.type === 'social') {
    body = `<ul class="social"><li><a href="https://twitter.example/${siteHost}">Twitter</a></li><li><a href="https://mastodon.example/@docs">Mastodon</a></li><li><a href="https://${siteHost}/feed.xml">RSS</a></li></ul>`;
  } else {
    body = `<ul>${widget.items.map((t) => `<li><a href="https://${siteHost}/p/${slugify(t)}">${escapeHtml(t)}</a></li>`).join('')}</ul>`;
  }
  const cls = widget.slot === 'sidebar' ? 'widget sidebar-widget' : 'widget footer-widget';
  return `<aside class="${cls} widget_${widget.type}"><h3 class="widget-title">${escapeHtml(title)}</h3>${body}</aside>`;
}

function opaqueName(value: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return `css-${(h >>> 0).toString(36).padStart(7, '0').slice(0, 7)}`;
}

const OPAQUE_TAGS: Record<string, string> = { aside: 'div', footer: 'div', time: 'span', ins: 'div', form: 'div', button: 'span', input: 'span' };

/** The same chrome with nothing in the markup that names it as chrome. */
export function opaqueMarkup(fragment: string): string {
  return fragment
    .replace(/<(\/?)(aside|footer|time|ins|form|button|input)\b/g, (_all, slash: string, name: string) => `<${slash}${OPAQUE_TAGS[name]}`)
    .replace(/\s(class|id)="([^"]*)"/g, (_all, attr: string, value: string) => ` ${attr}="${opaqueName(value)}"`)
    .replace(/\s(?:role|aria-label|data-[a-z-]+|datetime|placeholder|name|type|action|method)="[^"]*"/g, '');
}

/** Where chrome goes in a raw page: after <body>, after a paragraph near the middle, before </body>. */
function anchors(html: string): { top: number; middle: number; bottom: number } {
  const body = /<body\b[^>]*>/i.exec(html);
  const top = body === null ? 0 : body.index + body[0].length;
  const end = html.toLowerCase().lastIndexOf('</body>');
  const bottom = end < top ? html.length : end;
  const mid = top + Math.floor((bottom - top) / 2);
  const close = html.slice(mid, bottom).search(/<\/p>/i);
  const middle = close < 0 ? bottom : mid + close + 4;
  return { top, middle, bottom };
}

export function renderWithChrome(raw: string, chrome: Chrome, language: string, siteHost: string): string {
  if (chrome.ads.length === 0 && chrome.meta === null && chrome.widgets.length === 0) return raw;
  const words = chromeWords(language);
  const at = anchors(raw);
  let top = '';
  let middle = '';
  let bottom = '';
  for (const ad of chrome.ads) {
    const html = renderAd(ad, words);
    if (ad.slot === 'top') top += html;
    else if (ad.slot === 'middle') middle += html;
    else bottom += html;
  }
  if (chrome.meta !== null) top += renderMeta(chrome.meta, words);
  for (const w of chrome.widgets) {
    if (w.slot === 'sidebar') top += renderWidget(w, words, siteHost);
    else bottom += renderWidget(w, words, siteHost);
  }
  if (chrome.meta !== null) {
    bottom += `<footer class="page-stats"><p>${words.crawled(chrome.meta.generated)} · ${chrome.meta.renderMs} ms</p></footer><!-- cache: MISS ${chrome.meta.generated} render ${chrome.meta.renderMs}ms -->`;
  }
  if (chrome.markup === 'opaque') {
    top = opaqueMarkup(top);
    middle = opaqueMarkup(middle);
    bottom = opaqueMarkup(bottom);
  }
  return raw.slice(0, at.top) + top + raw.slice(at.top, at.middle) + middle + raw.slice(at.middle, at.bottom) + bottom + raw.slice(at.bottom);
}
