/**
 * A seeded generator of crawl-like pages for the quick start and the
 * integration tests: a few sites, each with its own template (navigation,
 * sidebar, ad slot, view counter, timestamp, footer), articles in English and
 * Chinese, and the near-duplicates a crawler really meets: the same article
 * refetched with another ad, counter, timestamp and session id in its links,
 * or copied exactly under another URL. Pure: no I/O.
 */
import { mulberry32 } from '../mulberry32.js';

export interface DemoPage {
  id: string;
  url: string;
  fetchedAt: number;
  html: string;
  /** What the generator planted (for tests and the demo log; not sent). */
  kind: 'original' | 'refetch' | 'exact-copy';
  /** Id of the original for refetches and copies. */
  of: string | null;
}


const EN_WORDS = (
  'market city council river bridge school teacher student library museum garden festival harbour railway station engineer ' +
  'budget report policy voters election mayor hospital doctor nurse patient research science climate weather storm flood ' +
  'farmer harvest price wheat coffee export trade company worker factory union strike contract court judge lawyer appeal ' +
  'team match season coach player stadium record goal league final ticket concert album singer stage theatre film director ' +
  'software network server database cloud security update release version developer open source community project ' +
  'history village castle war treaty king queen empire ancient discovery archaeologist mountain lake forest island coast'
).split(' ');
const EN_GLUE = 'the a of in on for with after before during while and but because however although new local national'.split(' ');
const ZH_PHRASES = (
  '城市 议会 河流 大桥 学校 老师 学生 图书馆 博物馆 花园 节日 港口 铁路 车站 工程师 预算 报告 政策 选民 选举 市长 医院 医生 ' +
  '护士 病人 研究 科学 气候 天气 暴雨 洪水 农民 丰收 价格 小麦 咖啡 出口 贸易 公司 工人 工厂 合同 法院 法官 律师 球队 比赛 ' +
  '赛季 教练 球员 体育场 纪录 联赛 决赛 门票 音乐会 专辑 歌手 舞台 剧院 电影 导演 软件 网络 服务器 数据库 安全 更新 版本 开发者 开源 社区 项目 历史 村庄 城堡'
).split(' ');
const ZH_GLUE = '的 在 了 和 是 对 由 将 已经 正在 今年 昨天 宣布 表示 认为 计划 推动 发展'.split(' ');

interface Site {
  host: string;
  name: string;
  lang: 'en' | 'zh';
}

const SITES: Site[] = [
  { host: 'news.example.org', name: 'Example Daily News', lang: 'en' },
  { host: 'forum.example.net', name: 'Example Community Forum', lang: 'en' },
  { host: 'xinwen.example.cn', name: '示例新闻网', lang: 'zh' },
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function sentence(rand: () => number, lang: 'en' | 'zh'): string {
  const n = 8 + Math.floor(rand() * 10);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    if (lang === 'en') words.push(rand() < 0.3 ? pick(rand, EN_GLUE) : pick(rand, EN_WORDS));
    else words.push(rand() < 0.3 ? pick(rand, ZH_GLUE) : pick(rand, ZH_PHRASES));
  }
  if (lang === 'zh') return `${words.join('')}。`;
  const s = words.join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

interface Article {
  site: Site;
  slug: string;
  title: string;
  paragraphs: string[];
}

function article(rand: () => number, site: Site, n: number): Article {
  const paragraphs: string[] = [];
  const count = 4 + Math.floor(rand() * 6);
  for (let p = 0; p < count; p++) {
    const sentences: string[] = [];
    const s = 3 + Math.floor(rand() * 4);
    for (let i = 0; i < s; i++) sentences.push(sentence(rand, site.lang));
    paragraphs.push(sentences.join(site.lang === 'en' ? ' ' : ''));
  }
  return { site, slug: `a${n}`, title: sentence(rand, site.lang).slice(0, 60), paragraphs };
}

function render(rand: () => number, a: Article, fetchedAt: number): string {
  const session = Math.floor(rand() * 1e12).toString(36);
  const nav = ['Home', 'World', 'Business', 'Sport', 'Culture', 'Technology', 'Opinion']
    .map((label) => `<li><a href="/${label.toLowerCase()}?sid=${session}">${label}</a></li>`)
    .join('');
  const ads = ['Buy one get one free at Example Mart', 'Cheap flights to 40 cities this week', 'Learn a language in 10 minutes a day', 'New phone, zero down payment'];
  const views = 100 + Math.floor(rand() * 100000);
  const mostRead = Array.from({ length: 5 }, (_, i) => `<li><a href="/a${Math.floor(rand() * 500)}?sid=${session}">Most read story ${i + 1}</a></li>`).join('');
  return [
    '<!DOCTYPE html><html><head>',
    `<meta charset="utf-8"><title>${a.title} | ${a.site.name}</title>`,
    `<script>window.__session="${session}";var t=${fetchedAt};</script><style>body{font-family:sans-serif}</style>`,
    '</head><body>',
    `<header><div class="logo">${a.site.name}</div><nav class="main-nav"><ul>${nav}</ul></nav></header>`,
    `<div class="ad-banner" id="ad-top">${pick(rand, ads)}</div>`,
    '<main><article>',
    `<h1>${a.title}</h1>`,
    `<p class="byline">Published ${new Date(fetchedAt).toUTCString()} · <span class="views">${views} views</span></p>`,
    ...a.paragraphs.map((p) => `<p>${p}</p>`),
    '</article></main>',
    `<aside class="sidebar"><h3>Most read</h3><ul>${mostRead}</ul><div class="ad-slot">${pick(rand, ads)}</div></aside>`,
    `<footer><p>© ${new Date(fetchedAt).getUTCFullYear()} ${a.site.name}. All rights reserved.</p><a href="/privacy?sid=${session}">Privacy</a> <a href="/contact">Contact</a></footer>`,
    '</body></html>',
  ].join('\n');
}

export interface DemoFeedOptions {
  seed?: number;
  /** Share of pages that refetch an earlier article (ads, counters, timestamps, session ids change). */
  refetchRate?: number;
  /** Share of pages that copy an earlier page byte for byte under another URL. */
  copyRate?: number;
  startTime?: number;
}

/** An endless, deterministic stream of demo pages. */
export function* demoPages(options: DemoFeedOptions = {}): Generator<DemoPage> {
  const rand = mulberry32(options.seed ?? 42);
  const refetchRate = options.refetchRate ?? 0.2;
  const copyRate = options.copyRate ?? 0.05;
  let time = options.startTime ?? Date.UTC(2026, 10, 1);
  const articles: Article[] = [];
  const pages: DemoPage[] = [];
  for (let n = 0; ; n++) {
    time += 1000 + Math.floor(rand() * 5000);
    const roll = rand();
    let page: DemoPage;
    if (roll < copyRate && pages.length > 0) {
      const source = pick(rand, pages);
      page = { ...source, id: `p${n}`, url: `https://mirror.example.com/${n}`, fetchedAt: time, kind: 'exact-copy', of: source.kind === 'original' ? source.id : source.of };
    } else if (roll < copyRate + refetchRate && articles.length > 0) {
      const index = Math.floor(rand() * articles.length);
      const a = articles[index]!;
      page = { id: `p${n}`, url: `https://${a.site.host}/${a.slug}?utm_source=feed&ref=${n}`, fetchedAt: time, html: render(rand, a, time), kind: 'refetch', of: pages.find((p) => p.kind === 'original' && p.url.endsWith(`/${a.slug}`) && p.url.includes(a.site.host))?.id ?? null };
    } else {
      const site = pick(rand, SITES);
      const a = article(rand, site, articles.length);
      articles.push(a);
      page = { id: `p${n}`, url: `https://${site.host}/${a.slug}`, fetchedAt: time, html: render(rand, a, time), kind: 'original', of: null };
    }
    pages.push(page);
    if (pages.length > 2000) pages.shift();
    yield page;
  }
}
