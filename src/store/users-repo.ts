import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';

export interface User {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: string;
}

export function createUsersRepo(db: Db, clock: Clock) {
  const byEmail = db.prepare<unknown[], User>('SELECT * FROM users WHERE email = ?');
  const byId = db.prepare<unknown[], User>('SELECT * FROM users WHERE id = ?');
  const insert = db.prepare(
    'INSERT INTO users (id, email, password_hash, created_at) VALUES (@id, @email, @password_hash, @created_at)',
  );
  const setPassword = db.prepare('UPDATE users SET password_hash = ? WHERE id = ?');
  const withPassword = db.prepare<unknown[], number>('SELECT COUNT(*) FROM users WHERE password_hash IS NOT NULL').pluck();

  return {
    findByEmail: (email: string): User | undefined => byEmail.get(email),
    findById: (id: string): User | undefined => byId.get(id),

    /** Returns the user with this email, creating it first if there is none (the CLI's `token create`). */
    ensure(email: string): User {
      return db
        .transaction(() => {
          const found = byEmail.get(email);
          if (found) return found;
          const user: User = { id: newId('usr', clock.now()), email, password_hash: null, created_at: iso(clock.now()) };
          insert.run(user);
          return user;
        })
        .immediate();
    },

    /** Accounts that can sign in to the dashboard (the first-run message asks for one while there is none). */
    countWithPassword: (): number => required(withPassword.get()),

    setPasswordHash(id: string, hash: string): void {
      setPassword.run(hash, id);
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
