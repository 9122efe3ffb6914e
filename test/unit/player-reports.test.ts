// What the service keeps of a game's report of its players, and of its console lines (issue 39 §3): no name with
// a control, bidi or line separator character, or longer than the spec's Player.name (64), ever becomes a Player,
// a player event or a webhook; no console line keeps a bidi control or a line separator.
import { playersFromMessage } from '../../src/runtime/server/probes';
import { isPlainText, stripTerminalControls } from '../../src/runtime/software/console-text';

test.each([
  ['grief\u0007er', false],
  ['x'.repeat(65), false],
  ['x'.repeat(64), true],
  ['m\u001b[2J', false],
  ['evil\u202egnp.exe', false],
  ['two\u2028lines', false],
  ['a\u2066b', false],
  ['lone\ud800', false],
  ['Steve', true],
  ['Zoë_日本', true],
  ['', false],
])('isPlainText(%j, 64) is %j', (name, ok) => expect(isPlainText(name, 64)).toBe(ok));

test('a report keeps only the players whose name and uuid are plain text within the spec', () => {
  const uuid = '5627dd98-e6be-3c21-b8a8-e92344183641';
  const report = playersFromMessage({
    type: 'players',
    online: 4,
    max: 10,
    players: [
      { name: 'alice', uuid },
      { name: 'grief\u0007er', uuid },
      { name: 'x'.repeat(200), uuid },
      { name: 'bob', uuid: `${uuid}\u202e` },
    ],
  });
  expect(report?.players).toEqual([{ name: 'alice', uuid }]);
});

test('a console line loses its bidi controls and line separators', () => {
  const line = 'alice\u202e (127.0.0.1) \u2066connected\u2069\u2028FORGED\u200f';
  expect(stripTerminalControls(line)).toBe('alice (127.0.0.1) connectedFORGED');
});
