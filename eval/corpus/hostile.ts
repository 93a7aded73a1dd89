/**
 * Hostile input a crawler really delivers: nothing, a huge page, binary
 * bytes, undecodable text (lone surrogates, replacement characters), absurd
 * nesting, script with no text. The product must answer every one (a verdict
 * or an error), never crash, and never call one a duplicate of a real page.
 * Text in them is seeded word salad, so no two are the same document.
 */
import { escapeHtml } from './markup.js';
import type { Rng } from './prng.js';

export interface HostilePage {
  readonly detail: string;
  readonly html: string;
}

function salad(rng: Rng, vocab: readonly string[], words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rng.pick(vocab));
  return out.join(' ');
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

/** The hostile pages, in a fixed order; `bigBodies` are real page bodies to make the huge one from. */
export function hostilePages(rng: Rng, vocab: readonly string[], bigBodies: readonly string[]): HostilePage[] {
  const out: HostilePage[] = [];
  out.push({ detail: 'empty', html: '' });
  out.push({ detail: 'whitespace-only', html: ' \n\t\r\n   \n' });
  out.push({ detail: 'empty-document', html: '<!DOCTYPE html><html><head><title></title></head><body></body></html>' });

  let huge = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>All-in-one manual</title></head><body>';
  for (let i = 0; huge.length < 5 * 1024 * 1024; i++) huge += `<section id="s${i}">${bigBodies[i % bigBodies.length]}</section>`;
  out.push({ detail: 'huge-5mb', html: `${huge}</body></html>` });

  for (let n = 0; n < 2; n++) {
    let bin = '';
    for (let i = 0; i < 20000; i++) bin += String.fromCharCode(rng.int(0, 255));
    out.push({ detail: 'binary-bytes', html: `\u0089PNG\r\n\u001a\n${bin}` });
  }
  let nul = '';
  for (let i = 0; i < 5000; i++) nul += rng.chance(0.5) ? '\u0000' : rng.pick(vocab);
  out.push({ detail: 'nul-bytes', html: page('nul', nul) });

  for (let n = 0; n < 2; n++) {
    const text = salad(rng, vocab, 600).replace(/ /g, () => (rng.chance(0.2) ? String.fromCharCode(rng.int(0xd800, 0xdfff)) : ' '));
    out.push({ detail: 'lone-surrogates', html: page(`broken ${n}`, `<p>${text}</p>`) });
  }
  for (let n = 0; n < 2; n++) {
    const text = salad(rng, vocab, 600).replace(/[aeiou]/g, (c) => (rng.chance(0.3) ? '\ufffd\ufffd' : c));
    out.push({ detail: 'replacement-chars', html: page(`mojibake ${n}`, `<p>${text}</p>`) });
  }
  out.push({ detail: 'only-replacement-chars', html: page('\ufffd\ufffd\ufffd', `<p>${'\ufffd'.repeat(3000)}</p>`) });

  const depth = 100000;
  out.push({ detail: 'deep-nesting-100k', html: page('deep', `${'<div>'.repeat(depth)}<p>${escapeHtml(salad(rng, vocab, 200))}</p>${'</div>'.repeat(depth)}`) });
  out.push({ detail: 'deep-nesting-unclosed-100k', html: page('deep unclosed', `${'<span><b>'.repeat(depth / 2)}${escapeHtml(salad(rng, vocab, 200))}`) });

  for (let n = 0; n < 2; n++) {
    const script = `var cfg=${JSON.stringify({ id: rng.hex(16), items: salad(rng, vocab, 400).split(' ') })};document.write(cfg.items.join(' '));`;
    out.push({ detail: 'only-script', html: `<!DOCTYPE html><html><head><title></title><script>${script}</script></head><body><script>${script}</script><noscript></noscript></body></html>` });
  }
  out.push({ detail: 'only-style-and-comments', html: `<html><head><style>${'.a{color:red}'.repeat(2000)}</style></head><body><!-- ${salad(rng, vocab, 300)} --></body></html>` });
  out.push({ detail: 'unclosed-comment', html: `<html><body><p>${escapeHtml(salad(rng, vocab, 50))}</p><!-- ${salad(rng, vocab, 500)}` });
  out.push({ detail: 'not-html-json', html: JSON.stringify({ error: 'rate limited', retryAfter: rng.int(1, 600), request: rng.hex(32) }) });
  return out;
}
