import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { wilsonInterval } from '../../../eval/stats.js';

describe('Wilson score interval', () => {
  it('matches published values', () => {
    // R binom.confint(method = "wilson"): 0/10 -> [0, 0.2775], 5/10 -> [0.2366, 0.7634], 1/100 -> [0.0018, 0.0545].
    const close = (got: [number, number] | null, want: [number, number]): void => {
      assert.ok(got !== null);
      assert.ok(Math.abs(got[0] - want[0]) < 1e-4 && Math.abs(got[1] - want[1]) < 1e-4, `${got} vs ${want}`);
    };
    close(wilsonInterval(0, 10), [0, 0.2775]);
    close(wilsonInterval(5, 10), [0.2366, 0.7634]);
    close(wilsonInterval(1, 100), [0.0018, 0.0545]);
    assert.equal(wilsonInterval(0, 0), null);
  });

  it('always contains the observed rate and stays inside [0, 1]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
        const k = Math.round(f * n);
        const [lo, hi] = wilsonInterval(k, n)!;
        assert.ok(lo >= 0 && hi <= 1 && lo <= k / n + 1e-12 && k / n <= hi + 1e-12);
      }),
      { seed: 1 },
    );
  });
});
