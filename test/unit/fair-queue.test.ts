import { createFairQueue } from '../../src/webhooks/fair-queue';
import type { DueHead } from '../../src/store/outbox-repo';

/** The dispatcher's fair queue (src/webhooks/fair-queue.ts): turns between users and webhooks, and their shares. */
const head = (user: string, webhook: string, server: string, seq = 1): DueHead => ({ seq, userId: user, webhookId: webhook, group: `${webhook}/${server}` });

type Step = ['add', DueHead] | ['take', string | null] | ['release', string] | ['done', string];

const cases: Array<[string, { limits: { perUser: number; perWebhook: number }; steps: Step[] }]> = [
  ['users take turns, whoever came first', {
    limits: { perUser: 10, perWebhook: 10 },
    steps: [['add', head('a', 'wa', 's1')], ['add', head('a', 'wa', 's2')], ['add', head('a', 'wa', 's3')], ['add', head('b', 'wb', 's1')],
      ['take', 'wa/s1'], ['take', 'wb/s1'], ['take', 'wa/s2'], ['take', 'wa/s3'], ['take', null]],
  }],
  ['a user past its share waits while others go on', {
    limits: { perUser: 2, perWebhook: 10 },
    steps: [['add', head('a', 'wa', 's1')], ['add', head('a', 'wa', 's2')], ['add', head('a', 'wa', 's3')],
      ['take', 'wa/s1'], ['take', 'wa/s2'], ['take', null], ['add', head('b', 'wb', 's1')], ['take', 'wb/s1'],
      ['done', 'wa/s1'], ['take', 'wa/s3']],
  }],
  ['a user\'s webhooks take turns, each within its part of the share', {
    limits: { perUser: 4, perWebhook: 2 },
    steps: [['add', head('a', 'dead', 's1')], ['add', head('a', 'dead', 's2')], ['add', head('a', 'dead', 's3')], ['add', head('a', 'live', 's1')],
      ['take', 'dead/s1'], ['take', 'live/s1'], ['take', 'dead/s2'], ['take', null], ['add', head('a', 'live', 's2')], ['take', 'live/s2']],
  }],
  ['a queue waiting or under way is not added twice (one attempt per queue, in order)', {
    limits: { perUser: 10, perWebhook: 10 },
    steps: [['add', head('a', 'wa', 's1', 1)], ['add', head('a', 'wa', 's1', 2)], ['take', 'wa/s1'], ['add', head('a', 'wa', 's1', 3)],
      ['take', null], ['done', 'wa/s1'], ['add', head('a', 'wa', 's1', 4)], ['take', 'wa/s1']],
  }],
  ['a released attempt frees its share, but its queue waits for done (its outcome written)', {
    limits: { perUser: 1, perWebhook: 1 },
    steps: [['add', head('a', 'wa', 's1', 1)], ['add', head('a', 'wa', 's2')], ['take', 'wa/s1'], ['take', null], ['release', 'wa/s1'],
      ['take', 'wa/s2'], ['add', head('a', 'wa', 's1', 2)], ['release', 'wa/s2'], ['take', null], ['done', 'wa/s1'], ['add', head('a', 'wa', 's1', 3)],
      ['take', 'wa/s1']],
  }],
];

test.each(cases)('%s', (_name, { limits, steps }) => {
  const q = createFairQueue(limits);
  const taken = new Map<string, DueHead>();
  for (const [i, [op, arg]] of steps.entries()) {
    if (op === 'add') q.add(arg);
    else if (op === 'done') q.done(taken.get(arg)!);
    else if (op === 'release') q.release(taken.get(arg)!);
    else {
      const got = q.take();
      if (got) taken.set(got.group, got);
      expect([i, got?.group ?? null]).toEqual([i, arg]);
    }
  }
});

test('the seq taken is the one first added for its queue', () => {
  const q = createFairQueue({ perUser: 1, perWebhook: 1 });
  q.add(head('a', 'wa', 's1', 7));
  q.add(head('a', 'wa', 's1', 8));
  expect(q.take()?.seq).toBe(7);
  expect(q.waiting()).toBe(0);
});
