/**
 * The page store's disk tier, behind the smallest interface it needs: bytes
 * appended at the end, read back by position. What lives there is read only
 * for a few candidates per page (the sketches, the ids of earlier pages), so
 * it need not stay in RAM. The core knows only this interface; the
 * file-backed store is at the edge (src/storage/file-blob-store.ts), and
 * MemoryBlobStore serves tests and the batch CLI.
 */

export interface BlobStore {
  /** Appends the bytes; returns the position of the first one. */
  append(bytes: Uint8Array): number;
  /** Fills `into` with the bytes at [position, position + into.length), all appended before. */
  read(position: number, into: Uint8Array): void;
  /** Bytes appended so far (the next position). */
  readonly byteLength: number;
  /** No byte before `position` will be read again: a store may free them. */
  release(position: number): void;
}

/** A blob that is dropped whole when done with (a sorted run of the sketch bands). */
export interface RunBlob extends BlobStore {
  /** Frees the blob; it is not read again. */
  dispose(): void;
}

/**
 * The blobs of a page store's tier: fixed-size records per ref, the id bytes they name, and new
 * blobs for the sketch bands' runs (sketch-bands.ts; in memory when absent).
 */
export interface PageTier {
  readonly records: BlobStore;
  readonly names: BlobStore;
  readonly runs?: () => RunBlob;
}

const PAGE_BITS = 15;
const PAGE = 1 << PAGE_BITS;
const EMPTY = new Uint8Array(0);

/** A BlobStore in pages of 32 KiB (no copy when it grows; released pages are dropped). */
export class MemoryBlobStore implements BlobStore {
  private pages: Uint8Array[] = [];
  private length = 0;

  get byteLength(): number {
    return this.length;
  }

  /** Bytes of RAM the pages hold. */
  get heldBytes(): number {
    let n = 0;
    for (const p of this.pages) n += p.byteLength;
    return n;
  }

  append(bytes: Uint8Array): number {
    const at = this.length;
    let done = 0;
    while (done < bytes.length) {
      const pos = at + done;
      const p = Math.floor(pos / PAGE);
      while (this.pages.length <= p) this.pages.push(new Uint8Array(PAGE));
      const o = pos % PAGE;
      const n = Math.min(bytes.length - done, PAGE - o);
      this.pages[p]!.set(bytes.subarray(done, done + n), o);
      done += n;
    }
    this.length = at + bytes.length;
    return at;
  }

  read(position: number, into: Uint8Array): void {
    if (!(position >= 0 && position + into.length <= this.length)) {
      throw new RangeError(`read of ${into.length} bytes at ${position} is outside 0..${this.length}`);
    }
    let done = 0;
    while (done < into.length) {
      const pos = position + done;
      const page = this.pages[Math.floor(pos / PAGE)]!;
      if (page.length === 0) throw new RangeError(`read at ${pos}: released`);
      const o = pos % PAGE;
      const n = Math.min(into.length - done, PAGE - o);
      into.set(page.subarray(o, o + n), done);
      done += n;
    }
  }

  release(position: number): void {
    for (let p = 0; (p + 1) * PAGE <= position && p < this.pages.length; p++) this.pages[p] = EMPTY;
  }
}

/** A RunBlob in memory. */
export function memoryRunBlob(): RunBlob {
  const blob = new MemoryBlobStore() as MemoryBlobStore & { dispose(): void };
  blob.dispose = () => blob.release(Infinity);
  return blob;
}

export function memoryPageTier(): PageTier {
  return { records: new MemoryBlobStore(), names: new MemoryBlobStore(), runs: memoryRunBlob };
}
