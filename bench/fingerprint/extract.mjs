import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { readFileSync } from 'node:fs';
const ex = new HtmlTextExtractor(process.argv[3] ?? 'remove');
const buf = new TextBuffer();
ex.extract(readFileSync(process.argv[2], 'utf8'), buf);
const t = buf.toString();
console.log(t.replace(/\s+/g, ' '));
