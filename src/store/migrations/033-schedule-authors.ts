// A schedule's author (openapi/v1.yaml Schedule.created_by, updated_by; docs/architecture.md "Schedules"): its runs
// act for the account that last created or changed it, with that account's permissions when each run begins.
// Earlier rows did not record who wrote them; they are given to the server's owner, for whom they already ran.
// `disabled_reason`: why the service disabled a schedule (NULL while enabled, or disabled by a person).
export const sql = `
ALTER TABLE schedules ADD COLUMN created_by TEXT;
ALTER TABLE schedules ADD COLUMN updated_by TEXT;
ALTER TABLE schedules ADD COLUMN disabled_reason TEXT;
UPDATE schedules SET created_by = (SELECT user_id FROM servers WHERE servers.id = schedules.server_id),
  updated_by = (SELECT user_id FROM servers WHERE servers.id = schedules.server_id);
`;
