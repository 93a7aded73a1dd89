/**
 * Where the real pages come from: HTML documentation that Debian packages
 * ship, written by other people with several site templates and languages.
 * Each doc set is a "site" (one template) in one language; the generator
 * installs the packages it needs when they are missing.
 *
 * Untranslated fallbacks are the trap here: apache2-doc's per-language
 * folders symlink missing translations to the English page, and partial
 * translations keep English paragraphs. Those are real near-duplicates of
 * pages in another doc set, so symlinks are skipped, the `lang` of the page
 * must match, and a script check rejects pages not mostly in the language.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface DocSet {
  /** Unique key of the doc set (site + language). */
  readonly key: string;
  /** Site (one template) the label reports. */
  readonly site: string;
  readonly language: string;
  /** Debian package that ships it. */
  readonly pkg: string;
  readonly root: string;
  readonly urlBase: string;
  /** Originals to draw from this doc set (fewer if it has fewer usable pages). */
  readonly quota: number;
  /** Relative paths to consider. */
  readonly accept?: (relPath: string) => boolean;
  /** `lang` attribute the page's <html> must carry, if the set mixes fallbacks in. */
  readonly htmlLang?: string;
  /** Why a page's raw HTML is not a usable original (a redirect, a "this page moved" stub), or null. */
  readonly reject?: (raw: string) => string | null;
  /**
   * The doc set this one translates page for page: the same relative paths.
   * Paragraphs pair up by their ids (LibreOffice's `par_id…`) or, for books
   * built from the same DocBook sources through gettext, by position: every
   * language has the same paragraphs in the same order. Links in the source
   * point into its own language folder (`hrefFrom`); in this set they point
   * to `hrefTo` (both empty: links are relative and need no change).
   */
  readonly translates?: Translation;
}

export interface Translation {
  readonly root: string;
  readonly hrefFrom: string;
  readonly hrefTo: string;
  /** How a paragraph finds its source paragraph: the same id (the default) or the same position. */
  readonly pairBy?: 'id' | 'position';
}

const DOC = '/usr/share/doc';
export const notIndexLike = (rel: string): boolean => !/(^|\/)(genindex|search|py-modindex|bookindex|sitemap)[^/]*\.html$/.test(rel);

function apache(language: string, dir: string, quota: number): DocSet {
  return {
    key: `apache-httpd.${language}`,
    site: 'apache-httpd',
    language,
    pkg: 'apache2-doc',
    root: `${DOC}/apache2-doc/manual/${dir}`,
    urlBase: `https://httpd.apache.org/docs/2.4/${dir}/`,
    quota,
    accept: notIndexLike,
    htmlLang: dir,
  };
}

function handbook(language: string, dir: string, quota: number): DocSet {
  return {
    key: `debian-handbook.${language}`,
    site: 'debian-handbook',
    language,
    pkg: 'debian-handbook',
    root: `${DOC}/debian-handbook/html/${dir}`,
    urlBase: `https://debian-handbook.info/browse/${dir}/stable/`,
    quota,
    accept: (rel) => !rel.includes('/') && rel !== 'index.html',
    // Publican builds every language from the English DocBook through gettext: the same files, the
    // same paragraphs in the same order, and links relative to the page.
    ...(dir === 'en-US' ? {} : { translates: { root: `${DOC}/debian-handbook/html/en-US`, hrefFrom: '', hrefTo: '', pairBy: 'position' } }),
  };
}

function reference(language: string, suffix: string): DocSet {
  return {
    key: `debian-reference.${language}`,
    site: 'debian-reference',
    language,
    pkg: `debian-reference-${suffix}`,
    root: '/usr/share/debian-reference',
    urlBase: 'https://www.debian.org/doc/manuals/debian-reference/',
    quota: 15,
    accept: (rel) => rel.endsWith(`.${suffix}.html`),
  };
}

function maintGuide(language: string, pkg: string, suffix: string): DocSet {
  return {
    key: `maint-guide.${language}`,
    site: 'maint-guide',
    language,
    pkg,
    root: `${DOC}/${pkg}/html`,
    urlBase: 'https://www.debian.org/doc/manuals/maint-guide/',
    quota: 11,
    accept: (rel) => rel.endsWith(`.${suffix}.html`),
  };
}

export const DOC_SETS: readonly DocSet[] = [
  { key: 'python.en', site: 'python-docs', language: 'en', pkg: 'python3.11-doc', root: `${DOC}/python3.11/html`, urlBase: 'https://docs.python.org/3.11/', quota: 220, accept: (rel) => notIndexLike(rel) && !rel.startsWith('_') },
  { key: 'postgresql.en', site: 'postgresql-docs', language: 'en', pkg: 'postgresql-doc-15', root: `${DOC}/postgresql-doc-15/html`, urlBase: 'https://www.postgresql.org/docs/15/', quota: 220, accept: notIndexLike },
  { key: 'git.en', site: 'git-docs', language: 'en', pkg: 'git-doc', root: `${DOC}/git-doc`, urlBase: 'https://git-scm.com/docs/', quota: 120, accept: (rel) => rel.endsWith('.html') },
  { key: 'sqlite.en', site: 'sqlite-docs', language: 'en', pkg: 'sqlite3-doc', root: `${DOC}/sqlite3`, urlBase: 'https://www.sqlite.org/', quota: 160, accept: notIndexLike },
  apache('en', 'en', 100),
  apache('fr', 'fr', 60),
  apache('ja', 'ja', 50),
  apache('zh-cn', 'zh-cn', 17),
  apache('de', 'de', 20),
  handbook('en', 'en-US', 60),
  handbook('zh-cn', 'zh-CN', 70),
  handbook('zh-tw', 'zh-TW', 50),
  handbook('ja', 'ja-JP', 50),
  handbook('de', 'de-DE', 40),
  handbook('fr', 'fr-FR', 40),
  reference('en', 'en'),
  reference('zh-cn', 'zh-cn'),
  reference('ja', 'ja'),
  reference('de', 'de'),
  maintGuide('en', 'maint-guide', 'en'),
  maintGuide('zh-cn', 'maint-guide-zh-cn', 'zh-cn'),
];

function installed(pkg: string): boolean {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

export function packageVersion(pkg: string): string {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

/** Installs the packages that are missing (apt-get; needs root). Throws with the reason otherwise. */
export function ensurePackages(pkgs: readonly string[], log: (line: string) => void): void {
  const missing = [...new Set(pkgs)].filter((p) => !installed(p));
  if (missing.length === 0) return;
  log(`installing ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (args: string[]): number | null =>
    spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status;
  if (run(['install', '-y', '--no-install-recommends', ...missing]) !== 0) {
    if (run(['update']) !== 0 || run(['install', '-y', '--no-install-recommends', ...missing]) !== 0) {
      throw new Error(`could not install ${missing.join(' ')} with apt-get (root and Debian's package archive are needed)`);
    }
  }
}

/** Regular .html files under root (symlinks skipped), as sorted relative paths. */
export function listHtmlFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = prefix + name;
      const st = lstatSync(full);
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) walk(full, `${rel}/`);
      else if (st.isFile() && name.endsWith('.html')) out.push(rel);
    }
  };
  walk(root, '');
  return out;
}
