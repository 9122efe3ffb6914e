// The last measurement of each server's folder (src/runtime/loops/disk-watcher.ts): bytes on disk and when, so reads
// and a restarted service see it; NULL until the first measurement.
export const sql = `
ALTER TABLE servers ADD COLUMN disk_used_bytes INTEGER;
ALTER TABLE servers ADD COLUMN disk_measured_at TEXT;
`;
