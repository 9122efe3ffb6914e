// Who did it (openapi/v1.yaml Actor): each event's actor as JSON, attached where events are raised
// (src/store/events-repo.ts). NULL for the events recorded before, shown as the service with cause `unknown`.
export const sql = `
ALTER TABLE events ADD COLUMN actor TEXT;
`;
