import crypto from 'node:crypto';
import type { IdempotencyRepo } from '../../store/idempotency-repo';

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Runs a POST that creates or acts at most once per `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header;
 * docs/conventions.md "Idempotency"). Without a key `work` just runs. With one, the first answer (status, body and
 * headers such as `Location`) is stored in the transaction of `work`'s writes and replayed, marked
 * `Idempotent-Replayed: true`, for the same key and the same request; the request is the operation, its path
 * and its body, so a key reused for another server, operation or body is 422 `idempotency_key_reused`. `identity`,
 * when given, is what identifies the request instead (createServer's fields, hashed as they were before it came
 * here, so a key stored by an earlier release still matches its retry).
 */
export function idempotent<A extends Answer>(
  repo: IdempotencyRepo,
  call: { principal: { userId: string }; headers: Record<string, unknown> },
  request: { operation: string; path: string; body: unknown; sealWith?: string; identity?: unknown },
  work: () => A,
): A {
  const key = call.headers['idempotency-key'];
  if (typeof key !== 'string') return work();
  const seal = request.sealWith === undefined ? null : sealKey(request.sealWith, key);
  const hash = request.identity !== undefined
    ? sha256(JSON.stringify(request.identity))
    : sha256(JSON.stringify([request.operation, request.path, request.body, seal ? sha256(seal) : null]));
  const outcome = repo.run(call.principal.userId, key, hash, work, (a) => {
    const text = JSON.stringify({ body: a.body, headers: a.headers ?? {} });
    return { status: a.status, body: seal ? encrypt(seal, text) : text };
  });
  if (!outcome.replayed) return outcome.value;
  const text = seal ? decrypt(seal, outcome.body) : outcome.body;
  const stored = JSON.parse(text) as { body: unknown; headers: Record<string, string> };
  return { status: outcome.status, body: stored.body, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' } } as unknown as A;
}

function sha256(text: string | Buffer): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

/**
 * An answer that holds a secret (createToken's) is stored only encrypted (AES-256-GCM), under a key derived from
 * the caller's own bearer token and the Idempotency-Key: the database keeps only tokens' hashes, so a copy of it
 * reveals no secret (SECURITY.md). The request hash includes the seal's hash, so only a retry with the same
 * token can replay it; another token is 422 idempotency_key_reused.
 */
function sealKey(secret: string, idempotencyKey: string): Buffer {
  return crypto.createHash('sha256').update(`gsh idempotent answer\0${secret}\0${idempotencyKey}`).digest();
}

function encrypt(key: Buffer, text: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return `sealed:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

function decrypt(key: Buffer, stored: string): string {
  const raw = Buffer.from(stored.replace(/^sealed:/, ''), 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
