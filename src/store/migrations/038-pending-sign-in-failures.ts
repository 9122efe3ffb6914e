// Wrong second factors given to one pending sign-in (src/dashboard/sign-in-factor.ts): past MAX_FACTOR_FAILURES (10) the
// pending sign-in ends and the password must be given again, so guesses at a code cost a password each time, from
// any address (the sign-in throttle counts per address).
export const sql = `
ALTER TABLE pending_sign_ins ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
`;
