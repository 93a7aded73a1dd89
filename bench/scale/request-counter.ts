/**
 * Counts the Kafka requests a process sends, by API, for the coordination
 * bench (COORDINATION_REQUESTS_DIR=dir). Loaded with `node --import` into a
 * measured instance: every request kafkajs sends is one socket write that
 * starts with its size (4 bytes) and its API key (2 bytes), so the writes are
 * counted by that key. A request costs the client and the broker far more
 * than the records it carries, so the count says what a change of batching
 * saves. Writes `requests.<pid>.json` in REQUEST_COUNTER_DIR at once on
 * SIGUSR2 (the bench reads it when its clock starts and stops) and at exit.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';

const API: Record<number, string> = {
  0: 'Produce',
  1: 'Fetch',
  2: 'ListOffsets',
  3: 'Metadata',
  8: 'OffsetCommit',
  9: 'OffsetFetch',
  10: 'FindCoordinator',
  11: 'JoinGroup',
  12: 'Heartbeat',
  14: 'SyncGroup',
  15: 'DescribeGroups',
  18: 'ApiVersions',
  22: 'InitProducerId',
  24: 'AddPartitionsToTxn',
  25: 'AddOffsetsToTxn',
  26: 'EndTxn',
  28: 'TxnOffsetCommit',
};

const dir = process.env.REQUEST_COUNTER_DIR;
if (dir) {
  const counts: Record<string, { requests: number; bytes: number }> = {};
  const write = Socket.prototype.write as (this: Socket, chunk: unknown, ...rest: unknown[]) => boolean;
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
    // Only the broker's connections: the metrics server's sockets have no remote port of a broker, and their writes are not requests.
    if (Buffer.isBuffer(chunk) && chunk.length >= 6 && chunk.readInt32BE(0) === chunk.length - 4) {
      const key = chunk.readInt16BE(4);
      const name = API[key] ?? `api${key}`;
      const c = (counts[name] ??= { requests: 0, bytes: 0 });
      c.requests++;
      c.bytes += chunk.length;
    }
    return write.call(this, chunk, ...rest);
  } as typeof Socket.prototype.write;
  const file = join(dir, `requests.${process.pid}.json`);
  // Written whole, then renamed: the bench never reads half a file.
  const dump = (): void => {
    writeFileSync(`${file}.tmp`, JSON.stringify(counts));
    renameSync(`${file}.tmp`, file);
  };
  process.on('SIGUSR2', dump);
  process.on('exit', dump);
}
