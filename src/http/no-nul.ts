// PostgreSQL's text cannot hold U+0000, and jsonb refuses its escape: a NUL anywhere in a request's body or query
// reached a statement and failed there, answered 500 (fuzz seed 129249097: a partner's name). Every body and query
// schema is therefore checked for it once it has parsed: a value (or an object key) holding NUL fails its
// validation as any other bad value does, a 400 in the documented shape naming the field, before the handler runs
// and before anything is written. No field of the interface has a use for the character.
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { nulPath } from '../lib/nul.ts';

export const NUL_MESSAGE = 'must not contain a NUL character (U+0000)';
const NAMED_DEPTH = 32;

/** fastify-type-provider-zod's validator compiler, each request schema refusing NUL (see above). */
export const validatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  const { schema, httpPart } = route;
  // path parameters are left to their routes: a path holding NUL names nothing, and each route answers an id or a
  // token that cannot be one as it answers any unknown one (404, a page's own 404)
  if (!(schema instanceof z.ZodType) || (httpPart !== 'body' && httpPart !== 'querystring')) {
    return zodValidatorCompiler(route as Parameters<typeof zodValidatorCompiler>[0]);
  }
  const refused = schema.superRefine((value, ctx) => {
    const at = nulPath(value);
    // the field named in the error, to a readable depth
    if (at) ctx.addIssue({ code: 'custom', path: at.length > NAMED_DEPTH ? [...at.slice(0, NAMED_DEPTH), '…'] : at, message: NUL_MESSAGE, input: value });
  });
  return zodValidatorCompiler({ ...route, schema: refused } as Parameters<typeof zodValidatorCompiler>[0]);
};
