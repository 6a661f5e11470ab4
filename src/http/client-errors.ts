// What Node's HTTP parser refuses before any route or hook runs (a request line or header that is not HTTP/1.1, a
// body whose framing is broken, headers over Node's 16 KiB, a request that did not arrive within its timeout),
// answered in the interface's `{error, detail}` shape with a request id, as every other answer is (D89). Fastify's own
// handler answered these `{error: "Bad Request", message: "Client Error", statusCode}`, which a generated client
// cannot read as the interface's errors.
import crypto from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

export interface ClientErrorAnswer {
  status: number;
  body: { error: string; detail: string };
}

/** The answer to a parser error by its code (Node's `ERR_HTTP_REQUEST_TIMEOUT`, llhttp's `HPE_*`). */
export function clientErrorAnswer(code: string | undefined): ClientErrorAnswer {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, body: { error: 'request_timeout', detail: 'The request did not arrive in full in time.' } };
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, body: { error: 'headers_too_large', detail: 'The request headers exceed 16 KiB.' } };
  }
  // llhttp's codes are fixed words (HPE_INVALID_HEADER_TOKEN, HPE_UNEXPECTED_CONTENT_LENGTH, …): they name what failed
  const why = code !== undefined && /^HPE_[A-Z_]{1,40}$/.test(code) ? ` (${code})` : '';
  return { status: 400, body: { error: 'invalid_request', detail: `The request is not valid HTTP/1.1${why}.` } };
}

type ClientSocket = Duplex & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * Fastify's clientErrorHandler: answers and closes the socket. As Node's own default does, nothing is written when
 * the socket cannot take it or when a response on it has already begun (writing then would corrupt that response).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: ClientSocket): void {
  // a connection reset leaves nothing to answer
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable && !socket._httpMessage?.headersSent) {
    const { status, body } = clientErrorAnswer(err.code);
    const json = JSON.stringify(body);
    socket.write(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(json)}`,
        `X-Request-Id: ${crypto.randomUUID()}`,
        'Connection: close',
      ].join('\r\n') +
        '\r\n\r\n' +
        json,
    );
  }
  socket.destroy();
}
