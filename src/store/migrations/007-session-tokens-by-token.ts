// The tokens repository asks, for a token, whether a dashboard session holds it (authentication, the per-user
// token cap and the purge; docs/conventions.md "Authentication"). session_tokens' primary key starts with
// session_id, so that question needs its own index on token_id.
//
// Since this migration token rows are deleted (the purge of old rows, and a session's page tokens when it ends
// or replaces them), unlike what 004 says; session_tokens' ON DELETE CASCADE drops their links with them.
export const sql = `
CREATE INDEX session_tokens_by_token ON session_tokens(token_id);
`;
