/**
 * A small line-chart renderer: panels of series over a shared grid, written
 * as plain SVG text (no dependencies, deterministic output so the committed
 * file only changes when the numbers do).
 */

export interface Series {
  readonly name: string;
  readonly color: string;
  /** SVG stroke-dasharray, e.g. '5 3'. */
  readonly dash?: string;
  /** [x, y]; y null = gap. */
  readonly points: readonly (readonly [number, number | null])[];
}

export interface Panel {
  readonly title: string;
  readonly series: readonly Series[];
}

export interface ChartOptions {
  readonly title: string;
  readonly subtitle?: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly xDomain: readonly [number, number];
  readonly yDomain: readonly [number, number];
  readonly xTicks: readonly number[];
  readonly yTicks: readonly number[];
  /** A vertical reference line (the chosen k). */
  readonly markX?: number;
  readonly columns: number;
  readonly panelWidth: number;
  readonly panelHeight: number;
  readonly yFormat?: (y: number) => string;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const r2 = (x: number): string => (Math.round(x * 100) / 100).toString();

export function renderChart(panels: readonly Panel[], o: ChartOptions): string {
  const margin = { left: 46, right: 12, top: 26, bottom: 34 };
  const header = o.subtitle === undefined ? 40 : 58;
  const legendNames = [...new Map(panels.flatMap((p) => p.series).map((s) => [s.name, s])).values()];
  const width = o.columns * o.panelWidth;
  const legendItems: { s: Series; x: number; row: number }[] = [];
  let lx = 12;
  let row = 0;
  for (const s of legendNames) {
    const itemWidth = 40 + s.name.length * 6.2;
    if (lx + itemWidth > width - 8 && lx > 12) {
      row++;
      lx = 12;
    }
    legendItems.push({ s, x: lx, row });
    lx += itemWidth;
  }
  const legendHeight = 12 + (row + 1) * 16;
  const rows = Math.ceil(panels.length / o.columns);
  const height = header + legendHeight + rows * o.panelHeight;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(o.title)}</text>`);
  if (o.subtitle !== undefined) out.push(`<text x="${width / 2}" y="42" text-anchor="middle" font-size="11" fill="#444">${esc(o.subtitle)}</text>`);
  for (const { s, x, row: r } of legendItems) {
    const ly = header + 12 + r * 16;
    out.push(`<line x1="${r2(x)}" y1="${ly}" x2="${r2(x + 24)}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash === undefined ? '' : ` stroke-dasharray="${s.dash}"`}/>`);
    out.push(`<text x="${r2(x + 30)}" y="${ly + 4}">${esc(s.name)}</text>`);
  }
  const yFormat = o.yFormat ?? ((y: number) => y.toFixed(1));
  panels.forEach((panel, index) => {
    const px = (index % o.columns) * o.panelWidth;
    const py = header + legendHeight + Math.floor(index / o.columns) * o.panelHeight;
    const w = o.panelWidth - margin.left - margin.right;
    const h = o.panelHeight - margin.top - margin.bottom;
    const x0 = px + margin.left;
    const y0 = py + margin.top;
    const sx = (x: number): number => x0 + ((x - o.xDomain[0]) / (o.xDomain[1] - o.xDomain[0])) * w;
    const sy = (y: number): number => y0 + h - ((Math.max(o.yDomain[0], Math.min(o.yDomain[1], y)) - o.yDomain[0]) / (o.yDomain[1] - o.yDomain[0])) * h;
    out.push(`<g>`);
    out.push(`<text x="${x0 + w / 2}" y="${py + 16}" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
    for (const t of o.yTicks) {
      out.push(`<line x1="${x0}" y1="${r2(sy(t))}" x2="${x0 + w}" y2="${r2(sy(t))}" stroke="#e4e4e4"/>`);
      out.push(`<text x="${x0 - 4}" y="${r2(sy(t) + 3.5)}" text-anchor="end" fill="#555">${esc(yFormat(t))}</text>`);
    }
    for (const t of o.xTicks) {
      out.push(`<line x1="${r2(sx(t))}" y1="${y0 + h}" x2="${r2(sx(t))}" y2="${y0 + h + 3}" stroke="#999"/>`);
      out.push(`<text x="${r2(sx(t))}" y="${y0 + h + 14}" text-anchor="middle" fill="#555">${t}</text>`);
    }
    out.push(`<text x="${x0 + w / 2}" y="${y0 + h + 28}" text-anchor="middle" fill="#333">${esc(o.xLabel)}</text>`);
    out.push(`<text transform="translate(${px + 11} ${y0 + h / 2}) rotate(-90)" text-anchor="middle" fill="#333">${esc(o.yLabel)}</text>`);
    if (o.markX !== undefined) out.push(`<line x1="${r2(sx(o.markX))}" y1="${y0}" x2="${r2(sx(o.markX))}" y2="${y0 + h}" stroke="#888" stroke-dasharray="2 3"/>`);
    for (const s of panel.series) {
      const segments: string[][] = [[]];
      for (const [x, y] of s.points) {
        if (y === null) segments.push([]);
        else segments[segments.length - 1]!.push(`${r2(sx(x))},${r2(sy(y))}`);
      }
      for (const seg of segments) {
        if (seg.length === 0) continue;
        out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.8"${s.dash === undefined ? '' : ` stroke-dasharray="${s.dash}"`} points="${seg.join(' ')}"/>`);
        for (const pt of seg) {
          const [cx, cy] = pt.split(',');
          out.push(`<circle cx="${cx}" cy="${cy}" r="2" fill="${s.color}"/>`);
        }
      }
    }
    out.push(`</g>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
