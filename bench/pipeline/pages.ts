/**
 * Seeded crawl-like pages of realistic size for the pipeline benchmark: the
 * demo feed (src/producers/demo-pages.ts: sites, templates, English and
 * Chinese articles, refetches and exact copies) with every article padded by
 * generated paragraphs to a seeded total size drawn uniformly from
 * [minBytes, maxBytes] of UTF-8 HTML.
 *
 * The padding is a function of the article (its <h1> and last paragraph), so
 * a refetch of an article gets the same padding as the original and an exact
 * copy stays byte-identical: the planted near-duplicates stay planted.
 */
import { demoPages, type DemoPage } from '../../src/producers/demo-pages.js';
import { mulberry32 } from '../../src/mulberry32.js';

export interface BenchPage {
  id: string;
  url: string;
  fetchedAt: number;
  html: string;
  kind: DemoPage['kind'];
}

export interface PageSetOptions {
  count: number;
  seed: number;
  minBytes: number;
  maxBytes: number;
}

const EN = (
  'analysts expect the council to publish the final figures next month while residents ask for more detail about the plan ' +
  'engineers inspected the bridge and the harbour after the storm and reported minor damage to the railway station roof ' +
  'the museum opened a new gallery about the ancient village and its castle with objects found by archaeologists last year ' +
  'players and the coach said the season was difficult but the stadium was full for every match of the league final ' +
  'developers released a security update for the database server and asked the community to test the new version soon'
).split(' ');
const ZH = (
  '记者 报道 市政府 今天 公布 新的 交通 计划 居民 表示 希望 了解 更多 细节 专家 认为 项目 将 推动 当地 经济 发展 ' +
  '博物馆 展出 古代 文物 游客 数量 明显 增加 学校 组织 学生 参观 图书馆 延长 开放 时间 医院 增加 医生 护士 服务 病人'
).split(' ');

const TEMPLATE_BYTES = 4000;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** What identifies the article behind a page, invariant under refetch (ads, counters, session ids change). */
function articleKey(html: string): string {
  const h1 = /<h1>([\s\S]*?)<\/h1>/.exec(html)?.[1] ?? '';
  const end = html.indexOf('</article>');
  const last = end > 0 ? html.slice(Math.max(0, html.lastIndexOf('<p>', end)), end) : '';
  return `${h1}\u0000${last}`;
}

function paragraph(rand: () => number, zh: boolean): string {
  const words = zh ? ZH : EN;
  const sentences: string[] = [];
  const n = 3 + Math.floor(rand() * 5);
  for (let s = 0; s < n; s++) {
    const len = 8 + Math.floor(rand() * 14);
    const parts: string[] = [];
    for (let i = 0; i < len; i++) parts.push(words[Math.floor(rand() * words.length)]!);
    if (zh) sentences.push(`${parts.join('')}。`);
    else {
      const s0 = parts.join(' ');
      sentences.push(`${s0[0]!.toUpperCase()}${s0.slice(1)}.`);
    }
  }
  return `<p>${sentences.join(zh ? '' : ' ')}</p>`;
}

/**
 * Padding of one article, a function of the article alone. The demo template
 * and article are 2.4-6 KB, so the total lands within a few KB of the drawn
 * target (pages below TEMPLATE_BYTES + padding keep their natural size).
 */
function padding(key: string, options: PageSetOptions, zh: boolean): string {
  const rand = mulberry32((fnv1a(key) ^ options.seed) >>> 0);
  const target = options.minBytes + Math.floor(rand() * (options.maxBytes - options.minBytes + 1));
  const parts: string[] = [];
  let bytes = TEMPLATE_BYTES;
  while (bytes < target) {
    const p = paragraph(rand, zh);
    bytes += Buffer.byteLength(p) + 1;
    parts.push(p);
  }
  return parts.join('\n');
}

/** `count` pages, ids `<prefix>p<n>`, each about minBytes-maxBytes of HTML. */
export function benchPages(options: PageSetOptions, idPrefix = ''): BenchPage[] {
  const feed = demoPages({ seed: options.seed });
  const out: BenchPage[] = [];
  const padCache = new Map<string, string>();
  for (let i = 0; i < options.count; i++) {
    const page = feed.next().value!;
    const key = articleKey(page.html);
    const zh = page.html.includes('xinwen.example.cn') || /[\u4e00-\u9fff]{4}/.test(/<h1>([\s\S]*?)<\/h1>/.exec(page.html)?.[1] ?? '');
    let pad = padCache.get(key);
    if (pad === undefined) {
      pad = padding(key, options, zh);
      padCache.set(key, pad);
      if (padCache.size > 4000) padCache.delete(padCache.keys().next().value!);
    }
    const end = page.html.indexOf('</article>');
    const html = end < 0 ? page.html : `${page.html.slice(0, end)}${pad}\n${page.html.slice(end)}`;
    out.push({ id: `${idPrefix}${page.id}`, url: page.url, fetchedAt: page.fetchedAt, html, kind: page.kind });
  }
  return out;
}
