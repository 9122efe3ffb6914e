import { createActors, serviceActor, userActor, type Actor } from '../../src/actors';

// The actor carried through awaits and timers (src/actors.ts), and its release when the service ends.
const fallback = serviceActor('unknown');
const alice = userActor('usr_alice', 'tok_alice');

test('work started inside run() sees its actor after awaits and timers; outside, the fallback', async () => {
  const actors = createActors(fallback);
  const seen: Actor[] = [];
  await actors.run(alice, async () => {
    await Promise.resolve();
    seen.push(actors.current());
    await new Promise<void>((resolve) => setTimeout(() => (seen.push(actors.current()), resolve()), 1));
  });
  expect(seen).toEqual([alice, alice]);
  expect(actors.current()).toEqual(fallback);
  actors.close();
});

test('close() releases the storage: work still under way sees the fallback, and a later run() works again', async () => {
  const actors = createActors(fallback);
  let after: Actor | undefined;
  await actors.run(alice, async () => {
    actors.close();
    await Promise.resolve();
    after = actors.current();
  });
  expect(after).toEqual(fallback);
  expect(actors.run(serviceActor('schedule'), () => actors.current())).toEqual(serviceActor('schedule'));
  actors.close();
});
