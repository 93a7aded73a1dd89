/**
 * Splits a byte stream into lines without decoding it first, so each line is
 * decoded on its own by the page rules (parseJsonRecord: a broken byte in a
 * body becomes U+FFFD, one in an id refuses that line; a chunk boundary never
 * splits a character into two replacements) and a 5 MB line costs one copy,
 * not a string per chunk.
 */
export async function* readLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of stream) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) break;
      const tail = chunk.subarray(start, newline);
      if (pendingBytes > 0) {
        pending.push(tail);
        yield stripCr(Buffer.concat(pending, pendingBytes + tail.length));
        pending = [];
        pendingBytes = 0;
      } else {
        yield stripCr(tail);
      }
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0) yield stripCr(Buffer.concat(pending, pendingBytes));
}

function stripCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
}
