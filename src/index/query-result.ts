/**
 * Query output, preallocated by the caller and reused across queries. The
 * arrays grow (doubling) only when a query has more hits than they hold.
 */
export interface QueryResult {
  count: number;
  refs: Uint32Array;
  distances: Uint8Array;
  /** Entries examined (sum over tables and runs, plus the fresh-insert buffer). */
  candidates: number;
}

export function createQueryResult(capacity = 64): QueryResult {
  const n = Math.max(1, Math.floor(capacity));
  return { count: 0, refs: new Uint32Array(n), distances: new Uint8Array(n), candidates: 0 };
}

export function pushResult(out: QueryResult, ref: number, distance: number): void {
  const i = out.count;
  if (i === out.refs.length) {
    const refs = new Uint32Array(i * 2);
    refs.set(out.refs);
    const distances = new Uint8Array(i * 2);
    distances.set(out.distances);
    out.refs = refs;
    out.distances = distances;
  }
  out.refs[i] = ref;
  out.distances[i] = distance;
  out.count = i + 1;
}
