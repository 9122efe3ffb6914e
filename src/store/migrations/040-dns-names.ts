// Server names published in DNS (openapi/v1.yaml `Server.dns_name`; docs/architecture.md "DNS names").
// `servers.dns_name` is the label in DNS_ZONE, lowercase ASCII (an IDN as its punycode A-label), one server's at
// most: the partial unique index makes a taken name a constraint, not a race.
// `dns_records` is the publisher's own memory, one row per server that has or had records, with no foreign key: it
// outlives its server until that server's records are gone. `names` is every name the service may have written for
// the server (recorded before an update is sent, so a crash between the DNS server's answer and our write leaves no
// record the service forgot); `published_for` is what the last accepted update published (dns_name|host|port|
// transport, the name in full), which the API compares with the server's row to say `published` or `pending`.
// `dns_zone` holds the zone and TTL the service publishes with (one row, written at each start from DNS_ZONE and
// DNS_TTL_S; none without DNS_ZONE), so every process's view of a server (the CLI's too) shows the same `dns`.
export const sql = `
ALTER TABLE servers ADD COLUMN dns_name TEXT;
CREATE UNIQUE INDEX servers_dns_name ON servers (dns_name) WHERE dns_name IS NOT NULL;
CREATE TABLE dns_records (
  server_id       TEXT PRIMARY KEY,
  names           TEXT NOT NULL DEFAULT '[]',
  published_for   TEXT,
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  next_attempt_at TEXT
);
CREATE TABLE dns_zone (
  zone TEXT NOT NULL,
  ttl  INTEGER NOT NULL
);
`;
