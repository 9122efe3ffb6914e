import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEM_BASE } from './problem';

/**
 * Requests Node's HTTP parser refuses before express sees them (headers over 16 KiB, malformed request lines)
 * still get a problem document (RFC 9457) rather than a bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const code = 'validation_failed';
    const body = JSON.stringify({
      type: PROBLEM_BASE + code,
      title: 'The request is not valid',
      status,
      detail: tooLarge ? 'The request line and headers may be at most 16 KiB.' : 'The request is not valid HTTP/1.1.',
      code,
    });
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
