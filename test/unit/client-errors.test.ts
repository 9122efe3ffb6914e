import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { errorRegistry, type ErrorCode } from '../../src/errors';
import { PROBLEM_BASE } from '../../src/http/problem';
import { answerClientErrors } from '../../src/http/client-errors';

/**
 * Requests Node's HTTP parser refuses never reach express; answerClientErrors must still answer them with a
 * problem document built from the error registry. Sent over a raw socket, since no HTTP client would send them.
 */
let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end('reached the handler'));
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Writes `raw` to a fresh connection and returns everything the server sent before it closed. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.end(raw);
  });
}

function parse(response: string) {
  const split = response.indexOf('\r\n\r\n');
  const [statusLine, ...fields] = response.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(
    fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]),
  );
  return { statusLine, headers, body: response.slice(split + 4) };
}

// Node's default limit on the request line plus headers is 16 KiB (http.maxHeaderSize).
const oversized = `GET /v1/servers HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(17 * 1024)}\r\n\r\n`;

const cases: Array<[string, { raw: string; statusLine: string; code: ErrorCode }]> = [
  ['headers over 16 KiB', { raw: oversized, statusLine: 'HTTP/1.1 431 Request Header Fields Too Large', code: 'request_header_fields_too_large' }],
  ['a malformed request line', { raw: 'NOT AN HTTP REQUEST\r\n\r\n', statusLine: 'HTTP/1.1 400 Bad Request', code: 'validation_failed' }],
];

describe('requests the HTTP parser refuses get a problem document from the registry', () => {
  test.each(cases)('%s', async (_name, { raw, statusLine, code }) => {
    const res = parse(await exchange(raw));
    expect(res.statusLine).toBe(statusLine);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const problem = JSON.parse(res.body);
    const { status, title } = errorRegistry[code];
    expect(problem).toMatchObject({ type: PROBLEM_BASE + code, status, code, title });
    expect(typeof problem.detail).toBe('string');
  });

  test('a well-formed request still reaches the handler', async () => {
    const res = parse(await exchange('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
    expect(res.statusLine).toBe('HTTP/1.1 200 OK');
    expect(res.body).toContain('reached the handler');
  });
});
