/**
 * The sharded assignment, as a property over many group shapes: every input
 * partition and every shard has exactly one owner, shards are balanced, a
 * standby is never the owner, a restarted instance (new member id, same
 * instance id) gets its shards back, and when an instance leaves only its
 * shards move, mostly to the instance that held them as standby.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planShardAssignment, type AssignmentMember } from '../../../src/kafka/shard-assigner.js';

const topics = (pagePartitions: number, shardCount: number, standby = true) => ({ pages: 'pages', pagePartitions, shards: 'shards', shardCount, standby: standby ? 'standby' : null });

function members(n: number, salt = ''): AssignmentMember[] {
  return Array.from({ length: n }, (_, i) => ({ memberId: `member-${salt}${i}-${(i * 7919) % 1000}`, instance: `dedup-${i}` }));
}

function ownerOf(plan: ReturnType<typeof planShardAssignment>, topic: string): Map<number, string> {
  const owners = new Map<number, string>();
  for (const [memberId, assignment] of plan) {
    for (const p of assignment[topic] ?? []) {
      assert.ok(!owners.has(p), `${topic} ${p} assigned twice`);
      owners.set(p, memberId);
    }
  }
  return owners;
}

test('every partition and shard has one owner, balanced; standbys are other members', () => {
  for (let m = 1; m <= 9; m++) {
    for (const shardCount of [1, 4, 8, 12, 31, 64]) {
      const group = members(m);
      const plan = planShardAssignment(group, topics(6, shardCount));
      assert.equal(ownerOf(plan, 'pages').size, 6);
      const owners = ownerOf(plan, 'shards');
      assert.equal(owners.size, shardCount);
      const counts = group.map((g) => plan.get(g.memberId)!.shards?.length ?? 0);
      assert.ok(Math.max(...counts) <= Math.ceil(shardCount / m) + 1, `balanced within one: ${counts}`);
      const standbys = ownerOf(plan, 'standby');
      assert.equal(standbys.size, m > 1 ? shardCount : 0);
      for (const [s, member] of standbys) assert.notEqual(member, owners.get(s), `standby of ${s} is its owner`);
    }
  }
});

test('a restarted instance (new member id) gets its shards back', () => {
  const before = planShardAssignment(members(4), topics(6, 24));
  const after = planShardAssignment(members(4, 'restarted-'), topics(6, 24));
  const byInstance = (plan: typeof before, group: AssignmentMember[]) => new Map(group.map((g) => [g.instance, plan.get(g.memberId)!.shards]));
  assert.deepEqual(byInstance(after, members(4, 'restarted-')), byInstance(before, members(4)));
});

test('when an instance leaves, only its shards move, mostly to their standby', () => {
  let moved = 0;
  let toStandby = 0;
  let kept = 0;
  let churned = 0;
  for (let m = 3; m <= 8; m++) {
    const group = members(m);
    const shardCount = 4 * m;
    const before = planShardAssignment(group, topics(6, shardCount));
    const owners = ownerOf(before, 'shards');
    const standbys = ownerOf(before, 'standby');
    const leaving = group[1]!;
    const after = ownerOf(planShardAssignment(group.filter((g) => g !== leaving), topics(6, shardCount)), 'shards');
    for (let s = 0; s < shardCount; s++) {
      if (owners.get(s) === leaving.memberId) {
        moved++;
        if (after.get(s) === standbys.get(s)) toStandby++;
      } else if (after.get(s) === owners.get(s)) kept++;
      else churned++; // a survivor's shard moved: only where the balance caps shift
    }
  }
  assert.ok(moved > 20);
  assert.ok(toStandby / moved >= 0.75, `${toStandby} of ${moved} moved shards went to their warm standby`);
  assert.ok(churned / (kept + churned) <= 0.1, `${churned} of ${kept + churned} survivors' shards moved`);
});
