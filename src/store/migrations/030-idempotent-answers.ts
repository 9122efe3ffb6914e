// createServer's stored answers take the shape every other Idempotency-Key answer has (src/http/handlers/idempotent.ts):
// `{"body": …, "headers": {"Location": …}}` instead of the server alone, now that createServer stores its answer
// through the same function. Only rows whose answer is a server object (an `id` of `srv_…`, no `body` member) are
// rewritten; sealed answers (createToken's, "sealed:…") are not JSON and are left as they are. Keys live 24 hours
// (docs/conventions.md "Idempotency"), so this only carries the last day's retries across the upgrade.
export const sql = `
UPDATE idempotency_keys
SET response_body = json_object(
  'body', json(response_body),
  'headers', json_object('Location', '/v1/servers/' || json_extract(response_body, '$.id')))
WHERE response_body IS NOT NULL AND json_valid(response_body)
  AND json_type(response_body) = 'object'
  AND json_type(response_body, '$.body') IS NULL
  AND json_extract(response_body, '$.id') LIKE 'srv\\_%' ESCAPE '\\';
`;
