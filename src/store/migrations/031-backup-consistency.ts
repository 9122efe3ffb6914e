// How a backup was made (openapi/v1.yaml Backup.consistency): `live`, the game running with its world saving paused,
// or `stop`, the game not running. Every backup made before this was made with the game stopped.
export const sql = `
ALTER TABLE backups ADD COLUMN consistency TEXT CHECK (consistency IN ('live', 'stop'));
UPDATE backups SET consistency = 'stop' WHERE status = 'ready';
`;
