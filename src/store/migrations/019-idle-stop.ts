// Idle stop (openapi/v1.yaml IdleStopMinutes): a server's minutes without a player before the service stops it,
// NULL for never; and who asked for an action (Action.reason): every action before this one was requested.
export const sql = `
ALTER TABLE servers ADD COLUMN idle_stop_minutes INTEGER CHECK (idle_stop_minutes IS NULL OR idle_stop_minutes BETWEEN 1 AND 10080);
ALTER TABLE actions ADD COLUMN reason TEXT NOT NULL DEFAULT 'requested' CHECK (reason IN ('requested', 'idle'));
`;
