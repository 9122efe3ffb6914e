import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Where the SFTP server's host key is kept: DATA_DIR/sftp/ssh_host_ed25519_key (and `.pub` beside it). */
export function hostKeyFile(dataDir: string): string {
  return path.join(dataDir, 'sftp', 'ssh_host_ed25519_key');
}

/**
 * The SFTP server's host key (README "SFTP"): made once, at the first start, and kept in DATA_DIR so clients that
 * trusted it keep trusting it. An Ed25519 key (RFC 8709) from node:crypto, written in OpenSSH's private key format
 * (what ssh2 reads; it does not read PKCS #8 Ed25519 keys) with mode 0600, and its public key in authorized_keys
 * format beside it, so `ssh-keygen -lf DATA_DIR/sftp/ssh_host_ed25519_key.pub` prints its fingerprint.
 * Two services starting at once on one DATA_DIR keep the same key: the file is linked in place only if absent.
 */
export function loadHostKey(dataDir: string): { privateKey: string; publicKey: string } {
  const file = hostKeyFile(dataDir);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const made = opensshEd25519Key('gsh-sftp-host');
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, made.privateKey, { mode: 0o600 });
    try {
      fs.linkSync(tmp, file);
      fs.writeFileSync(`${file}.pub`, `${made.publicKey}\n`, { mode: 0o644 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  const privateKey = fs.readFileSync(file, 'utf8');
  const pubFile = `${file}.pub`;
  const publicKey = fs.existsSync(pubFile) ? fs.readFileSync(pubFile, 'utf8').trim() : '';
  return { privateKey, publicKey };
}

/** SSH's `string` (RFC 4251 §5): a uint32 length, then the bytes. */
function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/**
 * A new Ed25519 key in OpenSSH's format (PROTOCOL.key in OpenSSH's sources: "openssh-key-v1", no cipher, one key),
 * and its public key line.
 */
export function opensshEd25519Key(comment: string): { privateKey: string; publicKey: string } {
  const { privateKey } = crypto.generateKeyPairSync('ed25519');
  const { d, x } = privateKey.export({ format: 'jwk' });
  // An OKP private key's JWK holds both (RFC 8037 §2).
  if (!d || !x) throw new Error('node:crypto exported an Ed25519 key without its d and x');
  const seed = Buffer.from(d, 'base64url');
  const pub = Buffer.from(x, 'base64url');
  const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  const check = crypto.randomBytes(4);
  let secret = Buffer.concat([check, check, sshString('ssh-ed25519'), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0'), sshString('none'), sshString('none'), sshString(''), count, sshString(blob), sshString(secret)]);
  // The body is never empty, so the match is never null.
  const lines = (body.toString('base64').match(/.{1,70}/g) ?? []).join('\n');
  return {
    privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines}\n-----END OPENSSH PRIVATE KEY-----\n`,
    publicKey: `ssh-ed25519 ${blob.toString('base64')} ${comment}`,
  };
}
