// A reply started early (the auth layer's 401/403, the admin/sandbox 404, a 429) ends the request's lifecycle:
// nothing after it may run. Fastify waits for such a reply by awaiting it (a reply is a thenable that settles
// when the response stream ends), but a client that hangs up while an asynchronous onSend hook is still running
// (the rate-limit count of a refused request) settles it as well, with the response not ended, and fastify then
// carries on to the next hook and the handler — a Personal API handler ran without a principal (found by the
// 30,000-case edge fuzz run). The first onSend hook marks the request as replying; the first hook of every later
// stage stops the lifecycle of a request so marked.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.ts';

const REPLYING = Symbol('replying');
type Marked = FastifyRequest & { [REPLYING]?: true };

/** Whether a reply was already started for this request (its onSend hooks have run or are running). */
export function replyStarted(req: FastifyRequest): boolean {
  return (req as Marked)[REPLYING] === true;
}

function stopIfReplying(req: FastifyRequest, reply: FastifyReply): void {
  if (!replyStarted(req)) return;
  req.log.debug('reply already started (client gone before it was written): lifecycle stopped');
  // hijack marks the reply as handled, so fastify runs no further hook and no handler
  reply.hijack();
}

/** Register before every other hook of the app. */
export function registerReplyGuard(app: App): void {
  app.addHook('onSend', async (req, _reply, payload) => {
    (req as Marked)[REPLYING] = true;
    return payload;
  });
  app.addHook('preParsing', async (req, reply, payload) => {
    stopIfReplying(req, reply);
    return payload;
  });
  app.addHook('preValidation', async (req, reply) => stopIfReplying(req, reply));
  app.addHook('preHandler', async (req, reply) => stopIfReplying(req, reply));
}
