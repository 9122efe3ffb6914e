// A node whose engine is reached over mutual TLS (Docker's --tlsverify; README "Nodes", issue 41 §1): 1 when the
// service must connect to it with HTTPS and the client certificate kept in DATA_DIR/nodes/<name>/ (ca.pem, cert.pem,
// key.pem; src/node-certs.ts). 0 for a unix socket, or a plain tcp:// engine (loopback, or added with --insecure).
export const sql = `
ALTER TABLE nodes ADD COLUMN tls INTEGER NOT NULL DEFAULT 0;
`;
