/** Helpers for the snapshot files' tests (snapshot-parts.ts frame: magic, version, header length, header CRC-32, header JSON, parts). */
import * as zlib from 'node:zlib';

/** A file whose header is replaced (with a correct checksum), to reach the field checks. */
export function withHeader(good: Buffer, edit: (h: Record<string, unknown>) => void): Buffer {
  const length = good.readUInt32LE(8);
  const h = JSON.parse(good.subarray(16, 16 + length).toString('utf8')) as Record<string, unknown>;
  edit(h);
  const json = Buffer.from(JSON.stringify(h));
  const prefix = Buffer.from(good.subarray(0, 16));
  prefix.writeUInt32LE(json.length, 8);
  prefix.writeUInt32LE(zlib.crc32(json), 12);
  return Buffer.concat([prefix, json, good.subarray(16 + length)]);
}

/** What a damage property collects: the damaged files accepted, and the errors other than SNAPSHOT_INVALID. */
export function damageLog(): { accepted: string[]; other: string[]; record: (label: string, verdict: unknown) => void } {
  const accepted: string[] = [];
  const other: string[] = [];
  return {
    accepted,
    other,
    record: (label, verdict) => {
      if (verdict === 'ok') accepted.push(label);
      else if (verdict !== 'invalid') other.push(`${label}: ${String(verdict)}`);
    },
  };
}
