import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import avro from 'avsc';
import fc from 'fast-check';
import { assertAvroIdIsUtf8 } from '../../../src/wire/avro-page-id.js';
import { readSchema } from '../../../src/wire/record-codec.js';

const schema = JSON.parse(readSchema('crawled-page')) as { fields: { name: string; type: unknown }[] };
const writer = avro.Type.forSchema(schema as avro.Schema);
/** Writes the id field's raw bytes where the writer schema has a string (Avro encodes both alike). */
const rawId = avro.Type.forSchema({ ...schema, fields: schema.fields.map((f) => (f.name === 'id' ? { ...f, type: 'bytes' } : f)) } as avro.Schema);

test('property: an Avro id is refused exactly when its bytes are not UTF-8', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 24 }), (idBytes) => {
      const body = rawId.toBuffer({ id: Buffer.from(idBytes), url: 'u', fetchedAt: 0, html: null, text: 'some text' });
      const decoded = writer.fromBuffer(body);
      if (isUtf8(idBytes)) assert.doesNotThrow(() => assertAvroIdIsUtf8(writer, body, decoded));
      else assert.throws(() => assertAvroIdIsUtf8(writer, body, decoded), { code: 'PAGE_INVALID_UTF8' });
    }),
    { numRuns: 2000, seed: 3 },
  );
});

test('a real U+FFFD in an id is kept', () => {
  const body = writer.toBuffer({ id: 'page-\ufffd-1', url: 'u', fetchedAt: 0, html: null, text: 'x' });
  assert.doesNotThrow(() => assertAvroIdIsUtf8(writer, body, writer.fromBuffer(body)));
});
