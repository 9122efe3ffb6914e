import { isForbiddenAddress, resolveTarget, urlProblem, type Lookup } from '../../src/webhooks/address';

/**
 * Which addresses and ports a webhook may reach without WEBHOOK_ALLOW_PRIVATE (SECURITY.md, SSRF): IPv6 forms that
 * carry an IPv4 address are judged by the address they carry (RFC 4291 §2.5.5 IPv4-compatible and -mapped,
 * RFC 6052 NAT64, RFC 3056 6to4, RFC 4380 Teredo), and only https's ports are open.
 */
describe('addresses', () => {
  const cases: Array<[string, { address: string; forbidden: boolean }]> = [
    ['a public IPv4 address', { address: '93.184.215.14', forbidden: false }],
    ['IPv4 loopback', { address: '127.0.0.1', forbidden: true }],
    ['IPv4 private', { address: '10.1.2.3', forbidden: true }],
    ['the metadata address', { address: '169.254.169.254', forbidden: true }],
    ['a public IPv6 address', { address: '2606:2800:220:1:248:1893:25c8:1946', forbidden: false }],
    ['IPv6 loopback', { address: '::1', forbidden: true }],
    ['IPv4-mapped loopback', { address: '::ffff:7f00:1', forbidden: true }],
    ['IPv4-mapped loopback, dotted', { address: '::ffff:127.0.0.1', forbidden: true }],
    ['IPv4-mapped public', { address: '::ffff:5db8:d70e', forbidden: false }],
    ['IPv4-compatible loopback [::127.0.0.1]', { address: '::7f00:1', forbidden: true }],
    ['IPv4-compatible loopback, dotted', { address: '::127.0.0.1', forbidden: true }],
    ['IPv4-compatible private', { address: '::a01:203', forbidden: true }],
    ['IPv4-compatible metadata', { address: '::a9fe:a9fe', forbidden: true }],
    ['IPv4-compatible public', { address: '::5db8:d70e', forbidden: false }],
    ['NAT64 64:ff9b::/96 loopback', { address: '64:ff9b::7f00:1', forbidden: true }],
    ['NAT64 64:ff9b::/96 private, dotted', { address: '64:ff9b::10.0.0.1', forbidden: true }],
    ['NAT64 64:ff9b::/96 public', { address: '64:ff9b::5db8:d70e', forbidden: false }],
    ['local-use NAT64 64:ff9b:1::/48 (never global, RFC 8215)', { address: '64:ff9b:1:7f00:0:100::', forbidden: true }],
    ['local-use NAT64 64:ff9b:1::/48 with a public IPv4 at its end', { address: '64:ff9b:1::5db8:d70e', forbidden: true }],
    ['6to4 of loopback', { address: '2002:7f00:1::', forbidden: true }],
    ['6to4 of a private address', { address: '2002:c0a8:101::1', forbidden: true }],
    ['6to4 of the metadata address', { address: '2002:a9fe:a9fe:1::1', forbidden: true }],
    ['6to4 of a public address', { address: '2002:5db8:d70e::1', forbidden: false }],
    ['Teredo with a private server', { address: '2001:0:a00:1:8000:63bf:a2ff:fffe', forbidden: true }],
    ['Teredo with a loopback client (obfuscated 127.0.0.1)', { address: '2001:0:4136:e378:8000:63bf:80ff:fffe', forbidden: true }],
    ['Teredo with a public server and client', { address: '2001:0:4136:e378:8000:63bf:a247:28f1', forbidden: false }],
    ['unique local', { address: 'fd00:ec2::254', forbidden: true }],
    ['site-local (deprecated, RFC 3879)', { address: 'fec0::1', forbidden: true }],
    ['documentation 3fff::/20 (RFC 9637)', { address: '3fff::1', forbidden: true }],
    // issue 39 §4: each not globally reachable in the IANA special-purpose registries, and each was accepted
    ['IPv4-translated loopback ::ffff:0:a.b.c.d (RFC 2765)', { address: '::ffff:0:7f00:1', forbidden: true }],
    ['IPv4-translated public', { address: '::ffff:0:5db8:d70e', forbidden: false }],
    ['benchmarking 2001:2::/48 (RFC 5180)', { address: '2001:2::1', forbidden: true }],
    ['ORCHID 2001:10::/28 (deprecated, RFC 4843)', { address: '2001:10::1', forbidden: true }],
    ['SRv6 SIDs 5f00::/16 (RFC 9602)', { address: '5f00::', forbidden: true }],
    ['dummy prefix 100:0:0:1::/64 (RFC 9780)', { address: '100:0:0:1::1', forbidden: true }],
    ['IETF protocol assignments 2001::/23', { address: '2001:5::1', forbidden: true }],
    ['AS112-v6 2001:4:112::/48, globally reachable', { address: '2001:4:112::1', forbidden: false }],
    ['ORCHIDv2 2001:20::/28, globally reachable', { address: '2001:20::1', forbidden: false }],
    ['TURN anycast 2001:1::2, globally reachable', { address: '2001:1::2', forbidden: false }],
    ['not an address', { address: 'example.com', forbidden: true }],
  ];
  test.each(cases)('%s', (_name, { address, forbidden }) => {
    expect(isForbiddenAddress(address)).toBe(forbidden);
  });
});

describe('URLs and ports', () => {
  const cases: Array<[string, { url: string; allowPrivate?: boolean; problem: RegExp | null }]> = [
    ['https on its default port', { url: 'https://hooks.example.com/in', problem: null }],
    ['https on 443 written out', { url: 'https://hooks.example.com:443/in', problem: null }],
    ['https on 8443', { url: 'https://hooks.example.com:8443/in', problem: null }],
    ['https on 22 (a port probe)', { url: 'https://hooks.example.com:22/in', problem: /port must be 443 or 8443/ }],
    ['https on 80', { url: 'https://hooks.example.com:80/in', problem: /port must be 443 or 8443/ }],
    ['https on 6379', { url: 'https://hooks.example.com:6379/in', problem: /port must be 443 or 8443/ }],
    ['plain http', { url: 'http://hooks.example.com/in', problem: /must use https/ }],
    ['credentials', { url: 'https://u:p@hooks.example.com/in', problem: /user name or password/ }],
    ['any port with WEBHOOK_ALLOW_PRIVATE', { url: 'http://127.0.0.1:6379/in', allowPrivate: true, problem: null }],
  ];
  test.each(cases)('%s', (_name, { url, allowPrivate, problem }) => {
    const got = urlProblem(url, allowPrivate === true);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });
});

describe('resolveTarget refuses by the address a literal or a name carries, and names no resolved address', () => {
  const lookup: Lookup = async (host) => {
    const names: Record<string, string> = { 'nat64.example.com': '64:ff9b::a9fe:a9fe', 'sixtofour.example.com': '2002:a00:1::1', 'ok.example.com': '93.184.215.14' };
    const address = names[host];
    return address ? [{ address, family: address.includes(':') ? 6 : 4 }] : [];
  };
  const cases: Array<[string, { url: string; error: RegExp | null }]> = [
    ['[::127.0.0.1]', { url: 'https://[::127.0.0.1]/hook', error: /forbidden address/ }],
    ['[64:ff9b::127.0.0.1]', { url: 'https://[64:ff9b::127.0.0.1]/hook', error: /forbidden address/ }],
    ['[2002:7f00:1::1]', { url: 'https://[2002:7f00:1::1]/hook', error: /forbidden address/ }],
    ['a name whose AAAA is NAT64 of the metadata address', { url: 'https://nat64.example.com/hook', error: /^nat64\.example\.com resolves to a forbidden address/ }],
    ['a name whose AAAA is 6to4 of 10.0.0.1', { url: 'https://sixtofour.example.com/hook', error: /^sixtofour\.example\.com resolves to a forbidden address/ }],
    ['a name that does not resolve', { url: 'https://nothing.example.com/hook', error: /^nothing\.example\.com does not resolve/ }],
    ['a public name', { url: 'https://ok.example.com/hook', error: null }],
  ];
  test.each(cases)('%s', async (_name, { url, error }) => {
    const got = resolveTarget(url, false, lookup);
    if (error === null) await expect(got).resolves.toEqual({ address: '93.184.215.14', family: 4 });
    else {
      await expect(got).rejects.toThrow(error);
      // The resolved address is the service's resolver's answer, not the tenant's to learn (internal DNS).
      if (!url.includes('[')) await expect(got).rejects.not.toThrow(/a9fe|a00:1|127\.0\.0\.1|7f00/);
    }
  });
});
