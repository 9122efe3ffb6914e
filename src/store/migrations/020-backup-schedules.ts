// Backup schedules (openapi/v1.yaml BackupSchedule): a server's schedule as JSON (`every_hours` or `cron`, `keep`,
// and `since`, when it was set), NULL for none; and whether a backup was made by the schedule (Backup.automatic),
// which retention deletes first.
export const sql = `
ALTER TABLE servers ADD COLUMN backup_schedule TEXT;
ALTER TABLE backups ADD COLUMN automatic INTEGER NOT NULL DEFAULT 0 CHECK (automatic IN (0, 1));
`;
