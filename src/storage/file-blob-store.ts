/**
 * The page store's disk tier on a local file: append-only, written through a
 * small buffer (one write per 256 KiB, not one per page), read with pread
 * (fs.readSync at a position), so a read costs one system call and, while the
 * file is in the page cache, no disk access.
 *
 * Not fsynced, on purpose: the file is scratch. It is created under a name of
 * its own and unlinked at once, so it lives as long as its descriptor (closed
 * by close(), or when the store is collected, or at exit) and a crash leaves
 * nothing behind. What it holds is also in the snapshot file (which copies the
 * live part of it, and is fsynced) and in the changelog, so a crash loses
 * nothing the restart does not refill. That is also why no embedded store
 * (LevelDB, LMDB, SQLite) is used: the access is one append and reads at known
 * positions, which a file does with no native module, no write-ahead log and
 * no compaction of its own.
 */
import { closeSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { BlobStore, PageTier, RunBlob } from '../dedup/blob-store.js';

const BUFFER_BYTES = 256 << 10;
let created = 0;

/** Closes the descriptor of a store dropped without close(). */
const descriptors = new FinalizationRegistry<{ fd: number }>((held) => {
  if (held.fd >= 0) closeSync(held.fd);
});

export class FileBlobStore implements BlobStore {
  private readonly handle: { fd: number };
  /** Bytes written to the file. */
  private flushed = 0;
  private readonly buffer = new Uint8Array(BUFFER_BYTES);
  private buffered = 0;

  /** Creates the file at `path` (truncated if present); `unlink`: remove its name at once (scratch). */
  constructor(
    readonly path: string,
    unlink = false,
  ) {
    this.handle = { fd: openSync(path, 'w+') };
    if (unlink) unlinkSync(path);
    descriptors.register(this, this.handle, this);
  }

  private get fd(): number {
    return this.handle.fd;
  }

  get byteLength(): number {
    return this.flushed + this.buffered;
  }

  append(bytes: Uint8Array): number {
    const at = this.byteLength;
    if (this.buffered + bytes.length > BUFFER_BYTES) this.flush();
    if (bytes.length > BUFFER_BYTES) {
      this.write(bytes);
    } else {
      this.buffer.set(bytes, this.buffered);
      this.buffered += bytes.length;
    }
    return at;
  }

  read(position: number, into: Uint8Array): void {
    const end = position + into.length;
    if (!(position >= 0 && end <= this.byteLength)) throw new RangeError(`read of ${into.length} bytes at ${position} is outside 0..${this.byteLength}`);
    let done = 0;
    if (position < this.flushed) {
      const n = Math.min(into.length, this.flushed - position);
      while (done < n) {
        const got = readSync(this.fd, into, done, n - done, position + done);
        if (got === 0) throw new RangeError(`${this.path}: short read at ${position + done}`);
        done += got;
      }
    }
    if (done < into.length) {
      const o = position + done - this.flushed;
      into.set(this.buffer.subarray(o, o + into.length - done), done);
    }
  }

  /** File space is not reclaimed while the process runs: a restart starts the file afresh. */
  release(_position: number): void {}

  /** Writes the buffered bytes to the file (not fsynced: see above). */
  flush(): void {
    if (this.buffered === 0) return;
    this.write(this.buffer.subarray(0, this.buffered));
    this.buffered = 0;
  }

  close(): void {
    if (this.fd < 0) return;
    this.flush();
    closeSync(this.fd);
    this.handle.fd = -1;
    descriptors.unregister(this);
  }

  private write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done, this.flushed + done);
    this.flushed += bytes.length;
  }
}

/**
 * A page store tier in scratch files under `dir` (created if missing), unlinked at once: the
 * records, the ids, and one per sorted run of the sketch bands (closed when the run is merged).
 */
export function filePageTier(dir: string): PageTier & { close(): void } {
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `page-tier-${process.pid}-${++created}`);
  const records = new FileBlobStore(`${stem}.records`, true);
  const names = new FileBlobStore(`${stem}.names`, true);
  const open = new Set<FileBlobStore>();
  let run = 0;
  const runs = (): RunBlob => {
    const blob = new FileBlobStore(`${stem}.run-${++run}`, true);
    open.add(blob);
    return Object.assign(blob, { dispose: () => (open.delete(blob), blob.close()) });
  };
  const close = (): void => {
    records.close();
    names.close();
    for (const blob of open) blob.close();
    open.clear();
  };
  return { records, names, runs, close };
}
