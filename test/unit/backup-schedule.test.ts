import { silentLogger } from '../../src/log';
import { createBackupScheduler, nextBackupAt } from '../../src/runtime/loops/backup-schedule';
import { scheduleErrors } from '../../src/runtime/services/server-rules';
import type { BackupSchedule, StoredSchedule } from '../../src/store/servers-repo';

// Backup schedules (src/runtime/loops/backup-schedule.ts): when the next automatic backup is due, what a valid
// schedule is, and which servers the loop backs up.
const at = (iso: string) => Date.parse(iso);

test.each<[string, BackupSchedule, string, string]>([
  ['every 6 hours, from the last one', { every_hours: 6 }, '2026-11-24T01:30:00Z', '2026-11-24T07:30:00.000Z'],
  ['cron daily at 04:00 UTC, before 04:00', { cron: '0 4 * * *' }, '2026-11-24T03:59:00Z', '2026-11-24T04:00:00.000Z'],
  ['cron daily at 04:00 UTC, after 04:00', { cron: '0 4 * * *' }, '2026-11-24T04:00:00Z', '2026-11-25T04:00:00.000Z'],
  ['cron every 15 minutes', { cron: '*/15 * * * *' }, '2026-11-24T10:07:00Z', '2026-11-24T10:15:00.000Z'],
  ['cron on Sundays at 02:30', { cron: '30 2 * * 0' }, '2026-11-24T00:00:00Z', '2026-11-29T02:30:00.000Z'],
])('next backup: %s', (_name, schedule, after, want) => {
  expect(new Date(nextBackupAt(schedule, at(after))).toISOString()).toBe(want);
});

test.each<[string, BackupSchedule, string[]]>([
  ['an interval', { every_hours: 24, keep: 2 }, []],
  ['a cron expression', { cron: '0 4 * * 1-5' }, []],
  ['six fields', { cron: '0 0 4 * * *' }, ['/body/backup_schedule/cron']],
  ['not cron', { cron: 'every day at four' }, ['/body/backup_schedule/cron']],
  ['an hour that does not exist', { cron: '0 25 * * *' }, ['/body/backup_schedule/cron']],
  ['keep more than the plan', { every_hours: 1, keep: 3 }, ['/body/backup_schedule/keep']],
])('schedule check: %s', (_name, schedule, pointers) => {
  expect(scheduleErrors(schedule, 2).map((e) => e.pointer)).toEqual(pointers);
});

test('the loop backs up the servers that are due, once per due time, counting from the newest automatic backup', () => {
  const now = at('2026-11-24T12:00:00Z');
  const rows: Array<{ serverId: string; schedule: StoredSchedule; lastAutomatic: string | null }> = [
    { serverId: 'srv_due', schedule: { every_hours: 1, since: '2026-11-24T10:00:00Z' }, lastAutomatic: '2026-11-24T10:59:00Z' },
    { serverId: 'srv_notyet', schedule: { every_hours: 1, since: '2026-11-24T10:00:00Z' }, lastAutomatic: '2026-11-24T11:30:00Z' },
    { serverId: 'srv_new', schedule: { cron: '0 * * * *', since: '2026-11-24T11:10:00Z' }, lastAutomatic: null },
    // A schedule set after its last automatic backup counts from when it was set.
    { serverId: 'srv_reset', schedule: { every_hours: 2, since: '2026-11-24T11:00:00Z' }, lastAutomatic: '2026-11-24T01:00:00Z' },
  ];
  const asked: string[] = [];
  const scheduler = createBackupScheduler({ scheduled: () => rows, backUp: (id) => void asked.push(id), now: () => now, log: silentLogger, everyMs: 60_000 });
  expect(scheduler.runDue()).toEqual(['srv_due', 'srv_new']);
  expect(asked).toEqual(['srv_due', 'srv_new']);
});
