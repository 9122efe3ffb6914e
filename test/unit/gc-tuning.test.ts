// gc-tuning.ts: the streaming setting holds while any stream begun has not ended, each end counting once; and the
// files' transfer slots (file-transfers.ts) begin and end one, for users and the service's own actors alike.
import { streamsUnderWay, whileStreaming } from '../../src/gc-tuning';
import { createTransfers } from '../../src/runtime/services/file-transfers';
import { serviceActor } from '../../src/actors';

test('streams are counted, each end once', () => {
  const [a, b] = [whileStreaming(), whileStreaming()];
  expect(streamsUnderWay()).toBe(2);
  a();
  a();
  expect(streamsUnderWay()).toBe(1);
  b();
  expect(streamsUnderWay()).toBe(0);
});

test('a transfer slot is a stream until it is given back', async () => {
  const transfers = createTransfers(2);
  const user = { type: 'user', user_id: 'usr_1' } as const;
  const give = transfers.take(user as never);
  expect(streamsUnderWay()).toBe(1);
  await transfers.during(serviceActor('schedule'), async () => expect(streamsUnderWay()).toBe(2));
  give();
  expect(streamsUnderWay()).toBe(0);
});
