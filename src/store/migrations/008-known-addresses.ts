// Where each user signed in to the dashboard successfully, so a sign-in from there with the right password is not
// made to wait behind someone else's failures (docs/conventions.md "Authentication"). `address` is the rate
// limits' address key (an IPv4 address, or an IPv6 /56 prefix); the repository keeps a user's 20 most recent ones
// and forgets any unused for 30 days, and a password change forgets them all.
export const sql = `
CREATE TABLE known_addresses (
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  address      TEXT NOT NULL,
  last_used_at TEXT NOT NULL,
  PRIMARY KEY (user_id, address)
);
`;
