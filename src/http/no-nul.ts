// PostgreSQL's text cannot hold U+0000, and jsonb refuses its escape: a NUL anywhere in a request's body or query
// reached a statement and failed there, answered 500 (fuzz seed 129249097: a partner's name). Every body and query
// schema is therefore checked for it once it has parsed: a value (or an object key) holding NUL fails its
// validation as any other bad value does, a 400 in the documented shape naming the field, before the handler runs
// and before anything is written. No field of the interface has a use for the character. The same check refuses
// text that is not UTF-8 (D112): U+FFFD, which bytes that are not UTF-8 become, and unpaired surrogates.
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { textFaultAt } from '../lib/nul.ts';
const NAMED_DEPTH = 32;

/**
 * The paths of the arrays whose items the schema leaves to the domain (checkedByDomain items): such a list is judged
 * item by item (POST /v1/sessions:batch, C2.4: one bad item never fails the others), so a NUL in an item is that
 * item's rejection, not the request's.
 */
function itemListsOf(schema: z.ZodType, at: string[] = []): string[][] {
  const def = schema._zod.def as { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; element?: z.ZodType };
  if (def.type === 'object') return Object.entries(def.shape!).flatMap(([k, v]) => itemListsOf(v, [...at, k]));
  if (def.innerType) return itemListsOf(def.innerType, at); // optional, nullable, default, catch, readonly
  if (def.type === 'array' && anyValue(def.element!)) return [at];
  return [];
}

const anyValue = (schema: z.ZodType): boolean => {
  const def = schema._zod.def as { type: string; innerType?: z.ZodType };
  return def.type === 'unknown' || def.type === 'any' || (def.innerType !== undefined && anyValue(def.innerType));
};

/** fastify-type-provider-zod's validator compiler, each request schema refusing NUL (see above). */
export const validatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  const { schema, httpPart } = route;
  // path parameters are left to their routes: a path holding NUL names nothing, and each route answers an id or a
  // token that cannot be one as it answers any unknown one (404, a page's own 404)
  if (!(schema instanceof z.ZodType) || (httpPart !== 'body' && httpPart !== 'querystring')) {
    return zodValidatorCompiler(route as Parameters<typeof zodValidatorCompiler>[0]);
  }
  const items = itemListsOf(schema);
  const refused = schema.superRefine((value, ctx) => {
    const fault = textFaultAt(value, items);
    if (!fault) return;
    // the field named in the error, to a readable depth
    const at = fault.path;
    ctx.addIssue({ code: 'custom', path: at.length > NAMED_DEPTH ? [...at.slice(0, NAMED_DEPTH), '…'] : at, message: fault.message, input: value });
  });
  return zodValidatorCompiler({ ...route, schema: refused } as Parameters<typeof zodValidatorCompiler>[0]);
};
