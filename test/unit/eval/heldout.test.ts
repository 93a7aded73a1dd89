import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compose, DEFAULT_COMPOSE } from '../../../eval/corpus/compose.js';
import { hardNegative } from '../../../eval/corpus/hard-negative.js';
import { HELDOUT_DOC_SETS, isRedirect, libreOfficePage, mdBookChapter, notADocument, rustdocItem, sphinxPage } from '../../../eval/corpus/heldout-sources.js';
import { looksLikeLanguage, visibleText } from '../../../eval/corpus/html-text.js';
import type { Original } from '../../../eval/corpus/originals.js';
import { Rng } from '../../../eval/corpus/prng.js';
import { DOC_SETS, type DocSet } from '../../../eval/corpus/sources.js';
import { STREAMS, streamNamed } from '../../../eval/corpus/streams.js';
import { idParagraphs, MAX_UNTRANSLATED_SHARE, pairedParagraphs, partlyUntranslated } from '../../../eval/corpus/untranslated.js';
import type { Label, PageKind } from '../../../eval/labels.js';
import { heldoutSection, type ReportInputs } from '../../../eval/report/sections.js';
import { scoreVerdicts, type VerdictLine } from '../../../eval/score.js';
import { evaluateTargets, f1WithInterval, TARGETS } from '../../../eval/targets.js';

describe('streams', () => {
  it('the tuning stream is the doc sets and compose options it always had, with partly untranslated pages', () => {
    assert.equal(STREAMS.tuning.docSets, DOC_SETS);
    assert.deepEqual(STREAMS.tuning.compose, { ...DEFAULT_COMPOSE, partlyUntranslatedRate: 0.25 });
    assert.equal(DEFAULT_COMPOSE.seed, 'simhash-eval-v1');
    assert.equal(DEFAULT_COMPOSE.partlyUntranslatedRate, undefined);
    assert.equal(DEFAULT_COMPOSE.hardNegativeMinContentChanges, undefined);
    // Its translated doc sets pair paragraphs by position; none of the held-out stream's does.
    assert.ok(DOC_SETS.some((s) => s.translates?.pairBy === 'position'));
    assert.ok(HELDOUT_DOC_SETS.every((s) => s.translates === undefined || s.translates.pairBy === undefined));
    assert.throws(() => streamNamed('validation'), /unknown stream/);
  });

  it('the held-out stream reads no package and no folder of the tuning corpus, with another seed', () => {
    const tuningPackages = new Set(DOC_SETS.map((s) => s.pkg));
    for (const s of HELDOUT_DOC_SETS) {
      assert.ok(!tuningPackages.has(s.pkg), `${s.key} reads ${s.pkg}, a tuning package`);
      for (const t of DOC_SETS) assert.ok(!s.root.startsWith(t.root) && !t.root.startsWith(s.root), `${s.key} and ${t.key} share ${s.root}`);
    }
    assert.equal(new Set(HELDOUT_DOC_SETS.map((s) => s.key)).size, HELDOUT_DOC_SETS.length);
    assert.notEqual(STREAMS.heldout.compose.seed, DEFAULT_COMPOSE.seed);
    const languages = new Set(HELDOUT_DOC_SETS.map((s) => s.language));
    assert.ok(languages.size >= 8, `only ${languages.size} languages`);
    assert.ok(['ja', 'ko', 'zh-cn', 'zh-tw'].every((l) => languages.has(l)));
  });
});

describe('held-out doc-set filters', () => {
  it('a refresh inside <noscript> is not a redirect, one outside is', () => {
    const real = '<html><head><noscript><meta http-equiv="refresh" content="0; URL=noscript.html"></noscript><title>Real</title></head><body><p>text</p></body></html>';
    const redirect = '<html><head><meta http-equiv="refresh" content="0;URL=\'./arc-mutex/arc-base.html\'"></head><body></body></html>';
    assert.equal(isRedirect(real), false);
    assert.equal(isRedirect(redirect), true);
    assert.equal(isRedirect('<META HTTP-EQUIV=Refresh CONTENT="0; url=x">'), true);
    assert.equal(notADocument(real), null);
    assert.equal(notADocument(redirect), 'redirect');
    assert.equal(notADocument('<main><p>There is a new edition of the book and this is an old link.</p></main>'), 'moved-stub');
  });

  it('keeps chapters and items, not print, table-of-contents, index or old-edition pages', () => {
    assert.equal(mdBookChapter('ch04-01-what-is-ownership.html'), true);
    for (const rel of ['print.html', 'toc.html', '404.html', 'SUMMARY.html', 'index.html', '2018-edition/ch01-00.html', 'book.js']) assert.equal(mdBookChapter(rel), false, rel);
    assert.equal(rustdocItem('collections/struct.HashSet.html'), true);
    for (const rel of ['all.html', 'collections/index.html', 'settings.html']) assert.equal(rustdocItem(rel), false, rel);
    assert.equal(sphinxPage('ref/models/fields.html'), true);
    for (const rel of ['index.html', 'ref/index.html', 'contents.html', 'genindex.html', 'search.html', 'py-modindex.html', '_modules/django/db.html']) assert.equal(sphinxPage(rel), false, rel);
    assert.equal(libreOfficePage('text/swriter/guide/auto_numbering.html'), true);
    for (const rel of ['noscript.html', 'help.html', 'text/shared/help/x.js']) assert.equal(libreOfficePage(rel), false, rel);
  });

  it('tells the held-out languages apart from English', () => {
    const en = 'the value of this option is used by the server and it is set for each connection in the file that is read when the process starts '.repeat(3);
    const samples: Record<string, string> = {
      es: 'el valor de esta opción se usa en el servidor y se establece para cada conexión en el archivo que se lee cuando el proceso comienza con una configuración por defecto '.repeat(3),
      it: 'il valore di questa opzione è usato dal server e viene impostato per ogni connessione nel file che viene letto quando il processo della macchina non parte con una configurazione '.repeat(3),
      'pt-br': 'o valor desta opção é usado pelo servidor e é definido para cada conexão no arquivo que é lido quando o processo inicia com uma configuração padrão dos usuários '.repeat(3),
      ru: 'значение этого параметра используется сервером и задаётся для каждого соединения в файле который читается при запуске процесса и не меняется по умолчанию '.repeat(3),
      ko: '이 옵션의 값은 서버에서 사용되며 프로세스가 시작될 때 읽는 파일에서 각 연결마다 설정됩니다 기본 설정은 변경되지 않습니다'.repeat(3),
    };
    for (const [language, text] of Object.entries(samples)) {
      assert.equal(looksLikeLanguage(text, language), true, language);
      assert.equal(looksLikeLanguage(en, language), false, `English taken for ${language}`);
    }
  });
});

const SOURCE = `<html lang="en-US"><body><header id="TopLeftHeader"><p>LibreOffice 7.4 Help</p></header><div id="DisplayArea">
<h1>Numbering</h1>
<p id="par_id1" class="paragraph">LibreOffice can automatically apply numbering or bullets as you type into a document.</p>
<p id="par_id2" class="listitem">Choose <a href="en-US/text/shared/01/06050000.html">Format - Bullets and Numbering</a> to change the list style.</p>
<p id="par_id3" class="listitem">Press Enter again to finish the list that you started before.</p>
<p id="par_id4" class="listitem">Type a space, your text, and then press Enter to get the next number or bullet.</p>
${Array.from({ length: 16 }, (_, i) => `<p id="par_idx${i}">Another paragraph of the page, number ${i}, which stays as it is in both versions here.</p>`).join('\n')}
</div><footer><p id="par_idfoot">Help content debug info: this page is text/swriter/guide/auto_numbering.xhp</p></footer></body></html>`;

const TRANSLATED = SOURCE.replace('lang="en-US"', 'lang="es"')
  .replace('LibreOffice can automatically apply numbering or bullets as you type into a document.', 'LibreOffice puede aplicar automáticamente la numeración o las viñetas mientras escribe en un documento.')
  .replace('Choose <a href="en-US/text/shared/01/06050000.html">Format - Bullets and Numbering</a> to change the list style.', 'Vaya a <a href="es/text/shared/01/06050000.html">Formato - Viñetas y numeración</a> para cambiar el estilo de la lista.')
  .replace('Press Enter again to finish the list that you started before.', 'Pulse Intro de nuevo para terminar la lista que empezó antes.')
  .replace('Help content debug info: this page is', 'Información de depuración: esta página es');

const LINK = { hrefFrom: 'en-US/', hrefTo: 'es/' };

describe('partly untranslated pages', () => {
  it('pair the paragraphs of a book by position when both versions have the same paragraphs, and none otherwise', () => {
    const book = (paras: readonly string[]): string =>
      `<html><body><nav><p>Contents of the book</p></nav><div class="section">${paras.map((p) => `<div class="para">${p}</div>`).join('\n')}<p>${paras.length} paragraphs</p></div></body></html>`;
    const english = ['The Master Boot Record occupies the first 512 bytes of the first hard disk.', 'The <a href="sect.udev.html">/dev/ directory</a> holds special files.', 'grub-install /dev/sda'];
    const german = ['Der Master Boot Record belegt die ersten 512 Bytes der ersten Festplatte.', 'Das <a href="sect.udev.html">Verzeichnis /dev/</a> enthält spezielle Dateien.', 'grub-install /dev/sda'];
    const pairs = pairedParagraphs(book(german), book(english), 'position');
    assert.deepEqual(pairs.map(([ours, theirs]) => [ours.id, ours.text.slice(0, 10), theirs.text.slice(0, 10)]), [
      ['#0', 'Der Master', 'The Master'],
      ['#1', 'Das Verzei', 'The /dev/ '],
      ['#2', 'grub-insta', 'grub-insta'],
      ['#3', '3 paragrap', '3 paragrap'],
    ]);
    assert.deepEqual(pairedParagraphs(book(german), book(english.slice(0, 2)), 'position'), []);
    // By id, the book pairs nothing: its paragraphs have none.
    assert.deepEqual(pairedParagraphs(book(german), book(english)), []);
    for (let i = 0; i < 20; i++) {
      const made = partlyUntranslated(new Rng(`b${i}`), book(german), book(english), { hrefFrom: '', hrefTo: '', pairBy: 'position' }, 2, 0.9);
      assert.ok(made !== null);
      // Only the two translated paragraphs qualify (the command and the count read the same in both).
      assert.ok(made.paragraphs.every((id) => id === '#0' || id === '#1'), made.paragraphs.join());
      for (const id of made.paragraphs) assert.ok(made.html.includes(english[Number(id.slice(1))]!));
      assert.ok(made.html.includes('<nav><p>Contents of the book</p></nav>'));
    }
  });

  it('put translated paragraphs back to the source text of the same id, links into the translation', () => {
    for (let i = 0; i < 30; i++) {
      const made = partlyUntranslated(new Rng(`u${i}`), TRANSLATED, SOURCE, LINK, 3, 0.5);
      assert.ok(made !== null);
      assert.ok(made.paragraphs.length >= 1 && made.paragraphs.length <= 3);
      // Only translated paragraphs qualify: par_id4 is already English, the footer is the page's chrome.
      for (const id of made.paragraphs) assert.ok(['par_id1', 'par_id2', 'par_id3'].includes(id), id);
      const after = idParagraphs(made.html);
      const source = idParagraphs(SOURCE);
      const before = idParagraphs(TRANSLATED);
      for (const [id, p] of after) assert.equal(p.text, made.paragraphs.includes(id) ? source.get(id)!.text : before.get(id)!.text, id);
      assert.ok(!made.html.includes('href="en-US/'));
      assert.ok(made.html.includes('Información de depuración'));
      const changed = made.paragraphs.reduce((n, id) => n + before.get(id)!.text.length, 0);
      assert.ok(Math.abs(made.changedFraction - changed / visibleText(TRANSLATED).length) < 1e-9);
    }
  });

  it('keep within the share and paragraph caps, and give up when nothing fits or nothing is translated', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 3 }), fc.double({ min: 0.01, max: 0.3, noNaN: true }), (seed, maxParagraphs, maxShare) => {
        const made = partlyUntranslated(new Rng(seed), TRANSLATED, SOURCE, LINK, maxParagraphs, maxShare);
        if (made === null) return;
        assert.ok(made.paragraphs.length <= maxParagraphs);
        assert.ok(made.changedFraction <= maxShare + 1e-12);
      }),
    );
    assert.equal(partlyUntranslated(new Rng('x'), TRANSLATED, SOURCE, LINK, 3, 0.001), null);
    assert.equal(partlyUntranslated(new Rng('x'), SOURCE, SOURCE, LINK), null);
    assert.ok(MAX_UNTRANSLATED_SHARE < 0.1, 'below the 10% from which substantive edits start');
  });

  it('join the stream as near-duplicates of their translated original, only when the stream asks for them', () => {
    const set = (language: string, translates?: DocSet['translates']): DocSet => ({ key: `help.${language}`, site: 'help', language, pkg: 'p', root: '/nonexistent', urlBase: `https://help.example/${language}/`, quota: 10, ...(translates === undefined ? {} : { translates }) });
    const es = set('es', { root: '/nonexistent', ...LINK });
    const originals: Original[] = Array.from({ length: 12 }, (_, i) => ({ set: es, relPath: `p${i}.html`, url: `https://help.example/es/p${i}.html`, raw: TRANSLATED.replace('Numbering', `Numbering ${i}`), title: `t${i}`, translatedFrom: SOURCE }));
    const plain = compose(originals, { ...DEFAULT_COMPOSE, seed: 's' });
    assert.deepEqual(compose(originals, { ...DEFAULT_COMPOSE, seed: 's', partlyUntranslatedRate: 0 }), plain);
    assert.ok(!plain.labels.some((l) => l.kind === 'partly-untranslated'));
    const withKind = compose(originals, { ...DEFAULT_COMPOSE, seed: 's', partlyUntranslatedRate: 1 });
    const made = withKind.labels.filter((l) => l.kind === 'partly-untranslated');
    assert.equal(made.length, originals.length);
    const position = new Map(withKind.labels.map((l, i) => [l.id, i]));
    for (const l of made) {
      const source = withKind.labels.find((x) => x.id === l.sourceId)!;
      assert.equal(source.kind, 'original');
      assert.equal(source.cluster, l.cluster);
      assert.ok(position.get(source.id)! < position.get(l.id)!);
      assert.ok(l.changedFraction !== null && l.changedFraction > 0);
    }
    // Every other page is the one the stream had without the new kind.
    const others = withKind.pages.filter((_, i) => withKind.labels[i]!.kind !== 'partly-untranslated').map((p) => p.html);
    assert.deepEqual(others, plain.pages.map((p) => p.html));
  });
});

describe('hard negatives', () => {
  it('count the replacements outside the page\u2019s own chrome', () => {
    const onlyHeader = '<html><body><header><p>LibreOffice 7.4 Help</p></header><div><p>Choose the bullets and numbering dialog to change the list style of a paragraph.</p></div></body></html>';
    const made = hardNegative(new Rng('h'), onlyHeader, '<p>other_ident other_ident</p>');
    assert.ok(made !== null);
    assert.equal(made.contentChanges, 0);
    const inContent = onlyHeader.replace('the list style', 'the list style of version 7.4');
    assert.ok(hardNegative(new Rng('h'), inContent, '<p>other_ident</p>')!.contentChanges >= 1);
  });
});

function label(id: string, cluster: string, kind: PageKind, sourceId: string | null = null): Label {
  return { id, cluster, kind, site: 'docs', language: 'en', sourceId, detail: null, chromeMarkup: 'semantic', changedFraction: null };
}

describe('targets', () => {
  it('F1 comes with an interval around it that narrows as the stream grows', () => {
    const small = f1WithInterval(90, 100, 100)!;
    const large = f1WithInterval(900, 1000, 1000)!;
    assert.ok(Math.abs(small.f1 - 0.9) < 1e-12);
    assert.ok(small.interval[0] < 0.9 && small.interval[1] > 0.9);
    assert.ok(large.interval[1] - large.interval[0] < small.interval[1] - small.interval[0]);
    assert.equal(f1WithInterval(0, 0, 10), null);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), (tp, fp, fn) => {
        const r = f1WithInterval(tp, tp + fp, tp + fn)!;
        assert.ok(r.interval[0] <= r.f1 + 1e-12 && r.f1 <= r.interval[1] + 1e-12);
        assert.ok(r.interval[0] >= 0 && r.interval[1] <= 1);
      }),
    );
  });

  it('mark each target met or missed on the observed value, and say whether the interval clears it', () => {
    const labels: Label[] = [];
    const verdicts: VerdictLine[] = [];
    for (let i = 0; i < 400; i++) {
      labels.push(label(`o${i}`, `c${i}`, 'original'));
      verdicts.push({ id: `o${i}`, verdict: 'novel' });
    }
    // exact copies all caught; word edits 190 of 200 (95%: met, interval straddles); damaged pages 10 of 10 with one error.
    for (let i = 0; i < 200; i++) {
      labels.push(label(`x${i}`, `c${i}`, 'exact-copy', `o${i}`));
      verdicts.push({ id: `x${i}`, verdict: 'duplicate', duplicateOf: `o${i}` });
      labels.push(label(`w${i}`, `c${i}`, 'word-edit', `o${i}`));
      verdicts.push(i < 190 ? { id: `w${i}`, verdict: 'duplicate', duplicateOf: `o${i}` } : { id: `w${i}`, verdict: 'novel' });
    }
    for (let i = 0; i < 10; i++) {
      labels.push(label(`d${i}`, `c${i}`, 'damaged', `o${i}`));
      verdicts.push(i === 0 ? { id: `d${i}`, error: 'PAGE_EMPTY: no text' } : { id: `d${i}`, verdict: 'duplicate', duplicateOf: `o${i}` });
    }
    const rows = evaluateTargets(scoreVerdicts(labels, verdicts));
    const byTarget = new Map(rows.map((r) => [r.target, r]));
    assert.deepEqual(rows.map((r) => r.target), ['F1', 'distinct pages (originals) called duplicate', 'recall: exact-copy', 'recall: word-edit', 'recall: damaged', 'damaged pages left undecided (error or missing verdict)']);
    assert.equal(byTarget.get('recall: exact-copy')!.met, true);
    assert.equal(byTarget.get('recall: exact-copy')!.clears, true);
    assert.equal(byTarget.get('recall: word-edit')!.met, true);
    assert.equal(byTarget.get('recall: word-edit')!.clears, false);
    assert.equal(byTarget.get('recall: damaged')!.met, false);
    const undecided = byTarget.get('damaged pages left undecided (error or missing verdict)')!;
    assert.deepEqual([undecided.count, undecided.of, undecided.met], [1, 10, false]);
    // 0 of 400 originals called duplicate meets 0.1%, but 400 pages cannot show it (the interval reaches past it).
    const distinct = byTarget.get('distinct pages (originals) called duplicate')!;
    assert.deepEqual([distinct.value, distinct.met, distinct.clears], [0, true, false]);
    const f1 = byTarget.get('F1')!;
    assert.equal(f1.met, f1.value! >= TARGETS.f1);
  });
});

describe('held-out report section', () => {
  it('says the stream has not been run, or renders its targets from the results', () => {
    const empty = { heldout: null, cli: null } as unknown as ReportInputs;
    assert.match(heldoutSection(empty), /not been run/);
    const labels = [label('a', 'A', 'original'), label('b', 'A', 'exact-copy', 'a')];
    const scores = scoreVerdicts(labels, [{ id: 'a', verdict: 'novel' }, { id: 'b', verdict: 'duplicate', duplicateOf: 'a' }]);
    const corpus = { seed: 's', pages: 2, htmlChars: 10, packages: { p: '1' }, sitePackages: { docs: ['p'] }, originalsPerDocSet: { 'docs.en': 1 }, rejectedOriginals: {}, perKind: { original: 1, 'exact-copy': 1 }, perSite: {}, perLanguage: { en: 2 }, perSiteKind: {}, perDetail: {}, docSetPackages: { 'docs.en': 'p' } };
    const text = heldoutSection({ heldout: { corpus, cli: { command: 'c', seconds: 1, corpusSeconds: 2, pages: 2, scores } }, cli: null } as unknown as ReportInputs);
    assert.match(text, /\*\*Targets: \d+ of \d+ met\.\*\*/);
    assert.match(text, /\| recall: exact-copy \| ≥ 95\.0% \| 100\.0% \(1\/1;/);
    assert.match(text, /building the corpus took 2\.0 s/);
    assert.match(text, /\| docs\.en \| 1 \| p 1 \|/);
  });
});
