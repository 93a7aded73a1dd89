/**
 * Page ids arriving as Avro strings are held as strictly as JSON ids: avsc
 * decodes a `string` with replacement, so an id whose bytes are not UTF-8
 * would become U+FFFD and two different byte ids could become one. A decoded
 * id holding U+FFFD (rare, so nothing is paid on the common path) is read
 * again with the id field as `bytes` (Avro writes both alike), and refused
 * with PAGE_INVALID_UTF8 unless those bytes are UTF-8 (a real U+FFFD is).
 */
import { isUtf8 } from 'node:buffer';
import avro from 'avsc';
import { DedupError } from '../errors.js';

interface IdReader {
  readonly reader: avro.Type;
  readonly resolver: avro.Resolver;
}

/** Per writer type: the reader that sees the id as bytes, or null when the schema has no string id at its top level. */
const idReaders = new WeakMap<avro.Type, IdReader | null>();

function idReaderFor(writer: avro.Type): IdReader | null {
  let entry = idReaders.get(writer);
  if (entry !== undefined) return entry;
  const schema = writer.schema({ exportAttrs: true }) as { type?: unknown; fields?: { name: string; type: unknown }[] };
  if (schema.type !== 'record' || !Array.isArray(schema.fields) || !schema.fields.some((f) => f.name === 'id' && f.type === 'string')) entry = null;
  else {
    const reader = avro.Type.forSchema({ ...schema, fields: schema.fields.map((f) => (f.name === 'id' ? { ...f, type: 'bytes' } : f)) } as avro.Schema);
    entry = { reader, resolver: reader.createResolver(writer) };
  }
  idReaders.set(writer, entry);
  return entry;
}

/** Throws PAGE_INVALID_UTF8 when `decoded` (writer.fromBuffer(body)) holds an id whose bytes were not UTF-8. */
export function assertAvroIdIsUtf8(writer: avro.Type, body: Buffer, decoded: unknown): void {
  const id = decoded !== null && typeof decoded === 'object' ? (decoded as { id?: unknown }).id : undefined;
  if (typeof id !== 'string' || !id.includes('\ufffd')) return;
  const entry = idReaderFor(writer);
  if (entry === null) return;
  const raw = (entry.reader.fromBuffer(body, entry.resolver) as { id: Buffer }).id;
  if (!isUtf8(raw)) throw new DedupError('PAGE_INVALID_UTF8', 'id is not valid UTF-8; ids are kept exactly, never repaired');
}
