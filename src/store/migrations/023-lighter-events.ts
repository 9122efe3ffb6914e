// Two indexes of `events` that no query used but every event paid for (BENCHMARKS.md §6, the write overhead):
// `events_by_server` (the server filter is one of optional filters, `(@server_id IS NULL OR server_id = …)`, which
// SQLite answers through `events_by_user`), and `events_by_time`, which only the retention purge read: the purge
// now goes by `seq` (EventsRepo.purge), as events are appended in time order.
export const sql = `
DROP INDEX events_by_server;
DROP INDEX events_by_time;
`;
