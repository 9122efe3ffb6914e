import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '../errors';
import { problemDocument } from './problem';
import { newRequestId } from './request-id';

/**
 * Requests Node's HTTP parser refuses before express sees them (headers over 16 KiB, malformed request lines)
 * still get a problem document (RFC 9457) rather than a bare status line. Express never sees these requests, so
 * the answer is written to the socket by hand; its body, status and title come from the error registry through
 * problemDocument, like every other problem the service sends.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const problem =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('request_header_fields_too_large', 'The request line and headers may be at most 16 KiB.')
        : new AppError('validation_failed', 'The request is not valid HTTP/1.1.');
    // No `instance`: the parser failed, so there is no request path to name.
    const requestId = newRequestId();
    const body = JSON.stringify(problemDocument(problem, undefined, requestId));
    // RFC 9112 §4: the reason phrase is informational only; the standard one is sent, the title is in the body.
    const reason = STATUS_CODES[problem.status] ?? 'Error';
    socket.end(
      `HTTP/1.1 ${problem.status} ${reason}\r\n` +
        `Request-Id: ${requestId}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
