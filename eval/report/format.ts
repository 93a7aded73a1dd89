/** Number formatting and Markdown tables for the quality report (pure). */
import { wilsonInterval } from '../stats.js';

export function pct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || Number.isNaN(x) ? '—' : `${(x * 100).toFixed(digits)}%`;
}

export function num(x: number | null | undefined, digits = 3): string {
  return x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(digits);
}

export function frac(a: number, b: number, digits = 1): string {
  return b === 0 ? '—' : `${pct(a / b, digits)} (${a}/${b})`;
}

/** "96.5% (138/143; 92.1–98.5%)": the rate, the counts and its Wilson 95% interval. */
export function fracCI(a: number, b: number, digits = 1): string {
  const ci = wilsonInterval(a, b);
  return ci === null ? '—' : `${pct(a / b, digits)} (${a}/${b}; ${pct(ci[0], digits).replace('%', '')}–${pct(ci[1], digits)})`;
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const sep = header.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(sep), ...rows.map(line)].join('\n');
}

/** Replaces the text between `<!-- eval:begin NAME -->` and `<!-- eval:end NAME -->`. */
export function replaceBetweenMarkers(doc: string, name: string, body: string): string {
  const begin = `<!-- eval:begin ${name} -->`;
  const end = `<!-- eval:end ${name} -->`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < i) throw new Error(`docs marker ${name} is missing or out of order`);
  return `${doc.slice(0, i + begin.length)}\n${body.trim()}\n${doc.slice(j)}`;
}

export function markerNames(doc: string): string[] {
  return [...doc.matchAll(/<!-- eval:begin ([\w-]+) -->/g)].map((m) => m[1]!);
}
