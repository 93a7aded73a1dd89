/**
 * The held-out stream's doc sets: Debian packages the tuning corpus
 * (sources.ts) does not read, with other templates (Sphinx with Django's
 * theme, mdBook, rustdoc, Node's API docs, Publican, LibreOffice's help) and
 * languages the tuning corpus lacks (Spanish, Russian, Portuguese, Italian,
 * Korean). The product's defaults were never chosen on these pages, so the
 * figures this stream gives predict a stream nobody tuned on. Nothing may be
 * tuned on it (no sweep runs over it).
 *
 * Pages that are not documents of their own are skipped, as in sources.ts:
 * index and search pages, all-in-one and print pages (near-duplicates of
 * every chapter), redirects, "this page moved" stubs, and untranslated
 * fallbacks (the language check in originals.ts, and the overlap filter
 * against the English page chosen earlier).
 */
import { type DocSet, notIndexLike } from './sources.js';

const DOC = '/usr/share/doc';
const LIBREOFFICE_HELP = '/usr/share/libreoffice/help';

/**
 * A redirect: a `<meta http-equiv="refresh">` that is not inside
 * `<noscript>` (LibreOffice's help carries one there for readers without
 * JavaScript; the page itself is real).
 */
export function isRedirect(raw: string): boolean {
  const withoutNoscript = raw.replace(/<noscript\b[^>]*>[\s\S]*?<\/noscript\s*>/gi, '');
  return /<meta\b[^>]*http-equiv\s*=\s*["']?refresh/i.test(withoutNoscript);
}

/** Phrases of the stubs old mdBook editions left behind in place of their chapters. */
const MOVED_STUB_PHRASES = ['There is a new edition of the book and this is an old link', 'is no longer distributed with Rust'];

/** Why `raw` is not a document of its own ('redirect', 'moved-stub'), or null. */
export function notADocument(raw: string): string | null {
  if (isRedirect(raw)) return 'redirect';
  if (MOVED_STUB_PHRASES.some((p) => raw.includes(p))) return 'moved-stub';
  return null;
}

/** Pages of an mdBook that are not chapters: the all-in-one print page, the table of contents, the 404 page. */
export function mdBookChapter(rel: string): boolean {
  return rel.endsWith('.html') && !/(^|\/)(print|toc|404|SUMMARY|index)\.html$/.test(rel) && !rel.startsWith('2018-edition/');
}

/** A rustdoc page of an item or module (not the all-items list, the source view or the settings page). */
export function rustdocItem(rel: string): boolean {
  return rel.endsWith('.html') && !/(^|\/)(all|index|settings|help)\.html$/.test(rel);
}

function mdBook(key: string, dir: string, quota: number): DocSet {
  return { key: `${key}.en`, site: 'rust-mdbook', language: 'en', pkg: 'rust-doc', root: `${DOC}/rust-doc/html/${dir}`, urlBase: `https://doc.rust-lang.org/1.63.0/${dir}/`, quota, accept: mdBookChapter, reject: notADocument };
}

/** LibreOffice help folder names and the doc sets' language codes. */
export const LIBREOFFICE_LANGUAGES: readonly (readonly [folder: string, language: string, pkg: string])[] = [
  ['en-US', 'en', 'libreoffice-help-en-us'],
  ['es', 'es', 'libreoffice-help-es'],
  ['ru', 'ru', 'libreoffice-help-ru'],
  ['pt-BR', 'pt-br', 'libreoffice-help-pt-br'],
  ['it', 'it', 'libreoffice-help-it'],
  ['ja', 'ja', 'libreoffice-help-ja'],
  ['ko', 'ko', 'libreoffice-help-ko'],
  ['zh-CN', 'zh-cn', 'libreoffice-help-zh-cn'],
  ['zh-TW', 'zh-tw', 'libreoffice-help-zh-tw'],
];

/** LibreOffice's help pages are under text/; the folder's root holds the JavaScript shell and index pages. */
export const libreOfficePage = (rel: string): boolean => rel.startsWith('text/') && rel.endsWith('.html');

function libreOffice(folder: string, language: string, pkg: string, quota: number): DocSet {
  return {
    key: `libreoffice-help.${language}`,
    site: 'libreoffice-help',
    language,
    pkg,
    root: `${LIBREOFFICE_HELP}/${folder}`,
    urlBase: `https://help.libreoffice.org/7.4/${folder}/`,
    quota,
    accept: libreOfficePage,
    htmlLang: folder,
    reject: notADocument,
    // Every translation is generated from the same sources as en-US: same paths, same paragraph ids.
    ...(folder === 'en-US' ? {} : { translates: { root: `${LIBREOFFICE_HELP}/en-US`, hrefFrom: 'en-US/', hrefTo: `${folder}/` } }),
  };
}

function harden(language: string, dir: string, quota: number): DocSet {
  return {
    key: `harden-doc.${language}`,
    site: 'harden-doc',
    language,
    pkg: 'harden-doc',
    root: `${DOC}/harden-doc/html/${dir}`,
    urlBase: `https://www.debian.org/doc/manuals/securing-debian-manual/${dir}/`,
    quota,
    accept: (rel) => !rel.includes('/') && rel !== 'index.html',
  };
}

/** A Sphinx page of prose: not an index, search or table-of-contents page, not a highlighted source file (_modules/). */
export const sphinxPage = (rel: string): boolean => notIndexLike(rel) && !rel.startsWith('_') && !/(^|\/)(index|contents)\.html$/.test(rel);

/**
 * Per language, so that LibreOffice's help (one template) is about half of
 * the stream, not most of it; the English sets take what they have.
 */
const LIBREOFFICE_QUOTA = 110;

export const HELDOUT_DOC_SETS: readonly DocSet[] = [
  { key: 'django.en', site: 'django-docs', language: 'en', pkg: 'python-django-doc', root: `${DOC}/python-django-doc/html`, urlBase: 'https://docs.djangoproject.com/en/3.2/', quota: 300, accept: sphinxPage },
  { key: 'sphinx.en', site: 'sphinx-docs', language: 'en', pkg: 'sphinx-doc', root: `${DOC}/sphinx-doc/html`, urlBase: 'https://www.sphinx-doc.org/en/5.x/', quota: 80, accept: sphinxPage },
  // Not nodejs-doc: Debian's package conflicts with the nodejs packages Node 20 installs come from, and installing it removes Node.
  mdBook('rust-book', 'book', 100),
  mdBook('rust-reference', 'reference', 60),
  { key: 'rust-std.en', site: 'rustdoc', language: 'en', pkg: 'rust-doc', root: `${DOC}/rust-doc/html/std`, urlBase: 'https://doc.rust-lang.org/1.63.0/std/', quota: 150, accept: rustdocItem, reject: notADocument },
  // Symlinked language-negotiation names (basic-defs.html -> basic-defs.en.html) are skipped by listHtmlFiles.
  { key: 'debian-faq.en', site: 'debian-faq', language: 'en', pkg: 'debian-faq', root: `${DOC}/debian/FAQ`, urlBase: 'https://www.debian.org/doc/manuals/debian-faq/', quota: 15, accept: (rel) => rel.endsWith('.en.html') && rel !== 'index.en.html' },
  harden('en', 'en-US', 50),
  harden('it', 'it-IT', 30),
  harden('pt-br', 'pt-BR', 30),
  harden('zh-cn', 'zh-CN', 30),
  harden('ja', 'ja-JP', 20),
  ...LIBREOFFICE_LANGUAGES.map(([folder, language, pkg]) => libreOffice(folder, language, pkg, LIBREOFFICE_QUOTA)),
];
