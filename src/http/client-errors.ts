// What Node's HTTP server answers on its own, before any route or hook runs, answered in the interface's
// `{error, detail}` shape with a request id, as every other answer is (D89): a request line or header that is not
// HTTP/1.1, a body whose framing is broken, headers over Node's 16 KiB, a request that did not arrive within its
// timeout, an HTTP/1.1 request without a Host header, an Expect other than 100-continue, and CONNECT. Fastify's own
// handler answered the first ones `{error: "Bad Request", message: "Client Error", statusCode}` and Node the others
// with an empty body (or, for CONNECT, none): answers a generated client cannot read as the interface's errors.
import crypto from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { statusForCode } from './errors.ts';

export interface ClientErrorAnswer {
  status: number;
  body: { error: string; detail: string };
}

/** An answer by its code: the status from the one table of codes (errors.ts). */
const answerOf = (error: string, detail: string): ClientErrorAnswer => ({ status: statusForCode(error), body: { error, detail } });

/** The answer to a parser error by its code (Node's `ERR_HTTP_REQUEST_TIMEOUT`, llhttp's `HPE_*`). */
export function clientErrorAnswer(code: string | undefined): ClientErrorAnswer {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return answerOf('request_timeout', 'The request did not arrive in full in time.');
    case 'HPE_HEADER_OVERFLOW':
      return answerOf('headers_too_large', 'The request line and headers exceed 16 KiB.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return answerOf('payload_too_large', 'The chunk extensions of the request body exceed 16 KiB.');
  }
  // llhttp's codes are fixed words (HPE_INVALID_HEADER_TOKEN, HPE_UNEXPECTED_CONTENT_LENGTH, …): they name what failed
  const why = code !== undefined && /^HPE_[A-Z_]{1,40}$/.test(code) ? ` (${code})` : '';
  return answerOf('invalid_request', `The request is not valid HTTP/1.1${why}.`);
}

/** A whole HTTP/1.1 answer that closes the connection, as bytes for a socket no response object holds. */
function rawAnswer({ status, body }: ClientErrorAnswer): string {
  const json = JSON.stringify(body);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    `X-Request-Id: ${crypto.randomUUID()}`,
    'X-Content-Type-Options: nosniff', // D233's header on every answer, these too (D246)
    'Connection: close',
  ];
  return head.join('\r\n') + '\r\n\r\n' + json;
}

type ClientSocket = Duplex & { _httpMessage?: ServerResponse | null };

/**
 * Fastify's clientErrorHandler: answers the parser's error and closes the connection (after such an error the rest
 * of the stream cannot be read). Nothing is written when the client has gone. When the broken request was sent
 * behind others on the same connection (pipelining) whose responses are still being made, an answer written now
 * would be read as theirs: they are finished first, in order, and the error answered after them. When the error is
 * in the request whose response is in flight (its body), it is answered at once, unless that response has begun
 * (as Node's own handler does: writing then would corrupt it).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: ClientSocket): void {
  // a connection reset leaves nothing to answer
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = clientErrorAnswer(err.code);
  const inFlight = socket._httpMessage;
  // the parser reads a request only once the one before it arrived whole: a response whose request is complete
  // belongs to an earlier request than the broken one
  if (inFlight?.req.complete) {
    socket.pause(); // nothing more is read from a stream that is broken
    afterResponses(socket, () => answerAndClose(socket, answer));
    return;
  }
  // the broken request's own response (its body did not parse or did not arrive in time)
  if (inFlight?.headersSent) socket.destroy();
  else answerAndClose(socket, answer);
}

function answerAndClose(socket: Duplex, answer: ClientErrorAnswer): void {
  if (socket.writable) socket.write(rawAnswer(answer));
  socket.destroy();
}

/** Runs `then` once no response is being made on the socket any more (Node assigns queued ones in order). */
function afterResponses(socket: ClientSocket, then: () => void): void {
  const res = socket._httpMessage;
  if (!res || socket.destroyed) return then();
  const next = () => {
    res.off('finish', next);
    res.off('close', next);
    // Node's own 'finish' listener, registered first, hands the socket to the next queued response
    setImmediate(() => afterResponses(socket, then));
  };
  res.once('finish', next);
  res.once('close', next);
}

/**
 * The answers Node's server gives itself, in the same shape: an Expect it does not know (Node: 417 and an empty
 * body), CONNECT (Node: the connection dropped without a word), and an HTTP/1.1 request without Host (Node: 400 and
 * an empty body; with the check off here, `refuseMissingHost` answers it as the first hook).
 */
export function shapeServerAnswers(server: Server): void {
  // read by Node on every request (storeHTTPOptions sets it from the server's options; @types/node does not list it)
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const { status, body } = answerOf('expectation_failed', 'Only "Expect: 100-continue" is supported.');
    const json = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
      'x-request-id': crypto.randomUUID(),
      'x-content-type-options': 'nosniff',
      connection: 'close',
    });
    res.end(json);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {}); // a client that resets first changes nothing
    answerAndClose(socket, answerOf('not_found', 'No route CONNECT.'));
  });
}

/** RFC 9112 §3.2: an HTTP/1.1 request without a Host header is a 400. An onRequest hook, registered first. */
export async function refuseMissingHost(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (req.headers.host !== undefined || req.raw.httpVersionMajor !== 1 || req.raw.httpVersionMinor !== 1) return undefined;
  const { status, body } = answerOf('invalid_request', 'An HTTP/1.1 request must carry a Host header.');
  return reply.code(status).header('connection', 'close').send(body);
}
