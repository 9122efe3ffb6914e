// The activity log says every event in words (issue 38 §4; src/dashboard/public/js/activity.js): each type the spec's
// EventType lists has its own sentence there, so an event type added to the spec without one fails here, not on a
// customer's page ("Something happened that this page cannot describe yet" is for types a later version adds).
import fs from 'node:fs';
import path from 'node:path';
import { loadSpec } from '../../src/spec';

const source = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'dashboard', 'public', 'js', 'activity.js'), 'utf8');
const eventTypes: string[] = (loadSpec().document as { components: { schemas: Record<string, { enum: string[] }> } }).components.schemas.EventType.enum;

test('every EventType has its sentence in activity.js', () => {
  expect(eventTypes.length).toBeGreaterThan(20);
  expect(eventTypes.filter((type) => !source.includes(`case '${type}':`))).toEqual([]);
});

test('every kind of the filter names only types the spec lists', () => {
  const named = [...source.matchAll(/types: \[([^\]]*)\]/g)].flatMap((m) => [...m[1].matchAll(/'([^']+)'/g)].map((x) => x[1]));
  expect(named.length).toBeGreaterThan(10);
  expect(named.filter((type) => !eventTypes.includes(type))).toEqual([]);
});
