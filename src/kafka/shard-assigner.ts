/**
 * The sharded pipeline's partition assignor (a kafkajs PartitionAssigner run
 * by the group leader). Three subscribed topics, three rules:
 *
 *   pages topic      input partitions dealt round-robin over the members
 *                    sorted by instance id (balanced; stateless work)
 *   shard topic      shard s (changelog partition s) to the member ranked
 *                    highest for s by rendezvous hashing of its INSTANCE id,
 *                    capped at ceil(S / members) shards each
 *   standby topic    partition s to the next-ranked other member: it keeps a
 *                    warm copy of shard s (standbyReplicas = 1)
 *
 * Why rendezvous hashing by instance id (carried in the member metadata):
 * member ids change at every restart, instance ids do not. A restarted
 * instance gets its shards back (its local snapshots still apply), a member
 * that leaves moves only its own shards, and each goes to the member ranked
 * next for it, which is the member that held it as a standby: a failover
 * promotes a warm copy instead of restoring one. The caps keep the shards
 * balanced; a capped member can push a shard past its standby, which then
 * restores (counted, rare).
 */
import kafkajs, { type PartitionAssigner } from 'kafkajs';

const { MemberMetadata, MemberAssignment } = kafkajs.AssignerProtocol;

export interface AssignmentMember {
  readonly memberId: string;
  readonly instance: string;
}

export type Assignment = Map<string, Record<string, number[]>>;

/** A 32-bit mix of instance and shard (FNV-1a then a murmur finaliser): the rendezvous score. */
export function rendezvousScore(instance: string, shard: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < instance.length; i++) h = Math.imul(h ^ instance.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ shard, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function ranked(members: readonly AssignmentMember[], shard: number): AssignmentMember[] {
  return [...members].sort((a, b) => rendezvousScore(b.instance, shard) - rendezvousScore(a.instance, shard) || (a.instance < b.instance ? -1 : 1));
}

/** The whole assignment, pure: members (with their instance ids) and partition counts in, partitions per member out. */
export function planShardAssignment(
  members: readonly AssignmentMember[],
  topics: { pages: string; pagePartitions: number; shards: string; shardCount: number; standby: string | null },
): Assignment {
  const out: Assignment = new Map(members.map((m) => [m.memberId, {}]));
  if (members.length === 0) return out;
  const add = (member: AssignmentMember, topic: string, partition: number) => {
    const assignment = out.get(member.memberId)!;
    (assignment[topic] ??= []).push(partition);
  };
  const sorted = [...members].sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.memberId < b.memberId ? -1 : 1));
  for (let p = 0; p < topics.pagePartitions; p++) add(sorted[p % sorted.length]!, topics.pages, p);

  // One over the even share: a little imbalance buys stability (fewer shards
  // move between survivors when the member count changes).
  const cap = Math.ceil(topics.shardCount / members.length) + (members.length > 2 ? 1 : 0);
  const owned = new Map<string, number>();
  const standing = new Map<string, number>();
  for (let s = 0; s < topics.shardCount; s++) {
    const order = ranked(members, s);
    const owner = order.find((m) => (owned.get(m.memberId) ?? 0) < cap) ?? order[0]!;
    owned.set(owner.memberId, (owned.get(owner.memberId) ?? 0) + 1);
    add(owner, topics.shards, s);
    if (topics.standby !== null && members.length > 1) {
      const rest = order.filter((m) => m !== owner);
      const standby = rest.find((m) => (standing.get(m.memberId) ?? 0) < cap) ?? rest[0]!;
      standing.set(standby.memberId, (standing.get(standby.memberId) ?? 0) + 1);
      add(standby, topics.standby, s);
    }
  }
  return out;
}

/** The kafkajs adapter: instance ids travel in the member metadata's user data. */
export function shardAssigner(options: { instance: string; pagesTopic: string; shardTopic: string; standbyTopic: string | null }): PartitionAssigner {
  return ({ cluster }) => ({
    name: 'DedupShardAssigner',
    version: 1,
    async assign({ members }) {
      const parsed: AssignmentMember[] = members.map(({ memberId, memberMetadata }) => {
        const metadata = MemberMetadata.decode(memberMetadata);
        const instance = metadata?.userData?.length ? metadata.userData.toString('utf8') : memberId;
        return { memberId, instance };
      });
      const count = (topic: string) => cluster.findTopicPartitionMetadata(topic).length;
      const plan = planShardAssignment(parsed, {
        pages: options.pagesTopic,
        pagePartitions: count(options.pagesTopic),
        shards: options.shardTopic,
        shardCount: count(options.shardTopic),
        standby: options.standbyTopic,
      });
      return [...plan].map(([memberId, assignment]) => ({
        memberId,
        memberAssignment: MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }),
      }));
    },
    protocol({ topics }) {
      return { name: 'DedupShardAssigner', metadata: MemberMetadata.encode({ version: 1, topics, userData: Buffer.from(options.instance, 'utf8') }) };
    },
  });
}
