/**
 * Coordinator look-ups cached for one producer.
 *
 * kafkajs 2.2.4 asks the broker for the coordinator (FindCoordinator) before
 * every transactional request: AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit (the group's coordinator) and EndTxn. That is four round
 * trips of the nine in a transaction, one after another, on its critical
 * path. The coordinators move only when a broker fails over, so here the
 * answer is kept and reused, and dropped as soon as a request to that
 * coordinator fails (NOT_COORDINATOR, a lost connection, anything but the
 * two errors of a busy coordinator below): kafkajs's own retry then looks it
 * up again. A kept answer is also dropped after
 * `ttlMs`, so a coordinator that moved without a failed request is found again.
 *
 * kafkajs has no option for this. Its producer gets its cluster from a private
 * factory on the Kafka client; the factory is wrapped only while that one
 * producer is built. If a kafkajs upgrade renames it, the producer is built
 * as before, uncached (`cached` is false), and test/integration/transaction-requests.test.ts fails.
 */
import type { Kafka, Producer, ProducerConfig } from 'kafkajs';

/** The private factory's description in kafkajs 2.2.4 (src/index.js, PRIVATE.CREATE_CLUSTER). */
const CREATE_CLUSTER = 'private:Kafka:createCluster';

/** The coordinator requests of a transaction: a failure of any drops the cached coordinator. */
const COORDINATOR_REQUESTS = ['addPartitionsToTxn', 'addOffsetsToTxn', 'txnOffsetCommit', 'endTxn', 'initProducerId'] as const;

interface ClusterLike {
  findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<Record<string, unknown>>;
}

/**
 * Errors that say the coordinator is the right one, only busy: the answer is
 * kept. CONCURRENT_TRANSACTIONS comes at the start of most transactions begun
 * right after a commit, until the last one's markers are written.
 */
const RIGHT_COORDINATOR = new Set(['CONCURRENT_TRANSACTIONS', 'COORDINATOR_LOAD_IN_PROGRESS']);

type AnyFunction = (...args: unknown[]) => unknown;

/** Wraps a cluster's coordinator look-up with a cache, per coordinator type and key. */
export function cacheCoordinators(cluster: ClusterLike, ttlMs: number, now: () => number = Date.now): void {
  const find = cluster.findGroupCoordinator.bind(cluster);
  const kept = new Map<string, { broker: Record<string, unknown>; until: number }>();
  cluster.findGroupCoordinator = async (args) => {
    const key = `${args.coordinatorType ?? 0}:${args.groupId}`;
    const hit = kept.get(key);
    if (hit !== undefined && hit.until > now()) return hit.broker;
    const broker = await find(args);
    // The same object for every caller, so kafkajs's per-broker locks still see one broker.
    const wrapped = withDropOnFailure(broker, () => {
      if (kept.get(key)?.broker === wrapped) kept.delete(key);
    });
    kept.set(key, { broker: wrapped, until: now() + ttlMs });
    return wrapped;
  };
}

/** The broker as kafkajs uses it, but a failed coordinator request drops it from the cache first. */
function withDropOnFailure(broker: Record<string, unknown>, drop: () => void): Record<string, unknown> {
  const wrapped: Record<string, AnyFunction> = {};
  for (const name of COORDINATOR_REQUESTS) {
    const request = broker[name];
    if (typeof request !== 'function') continue;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await (request as AnyFunction).apply(broker, args);
      } catch (error) {
        if (!RIGHT_COORDINATOR.has((error as { type?: string } | null)?.type ?? '')) drop();
        throw error;
      }
    };
  }
  return new Proxy(broker, {
    get(target, property, receiver) {
      if (typeof property === 'string' && Object.hasOwn(wrapped, property)) return wrapped[property];
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/**
 * `kafka.producer(config)`, with its coordinator look-ups cached
 * (`cacheCoordinators`). `cached` says whether kafkajs let us.
 */
export function producerWithCachedCoordinators(kafka: Kafka, config: ProducerConfig, ttlMs: number): { producer: Producer; cached: boolean } {
  const client = kafka as unknown as Record<symbol, unknown>;
  const symbol = Object.getOwnPropertySymbols(client).find((s) => s.description === CREATE_CLUSTER);
  const original = symbol === undefined ? undefined : client[symbol];
  if (symbol === undefined || typeof original !== 'function') return { producer: kafka.producer(config), cached: false };
  let cached = false;
  client[symbol] = (options: unknown) => {
    const cluster = (original as AnyFunction)(options) as ClusterLike;
    if (typeof cluster?.findGroupCoordinator === 'function') {
      cacheCoordinators(cluster, ttlMs);
      cached = true;
    }
    return cluster;
  };
  try {
    return { producer: kafka.producer(config), cached };
  } finally {
    client[symbol] = original;
  }
}
