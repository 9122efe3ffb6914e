// Token trees (docs/conventions.md "Authentication"): the token that minted a token through the API, or NULL for a
// root token (made by the user: the CLI, the dashboard's page token on the signed-in user's behalf, and every token
// made before this migration). Revoking a token revokes its descendants (TokensRepo.revoke), and a token sees only
// itself and its descendants unless it is a root with every scope. No foreign key: a parent's row is purged only
// once it stopped working, and its descendants stopped with it (revoked together, or expiring no later).
export const sql = `
ALTER TABLE tokens ADD COLUMN parent_id TEXT;
CREATE INDEX tokens_by_parent ON tokens(parent_id) WHERE parent_id IS NOT NULL;
`;
