// Reading /openapi.json in tests: its operations, and a schema with its local $refs resolved.
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of the document, in document order. */
export function operations(doc: Json): Array<{ method: string; path: string; op: Json }> {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}

/** The schema with every local $ref replaced by what it points to (the document has no cycles). */
export function deref(doc: Json, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => deref(doc, n));
  if (!node || typeof node !== 'object') return node;
  const ref = (node as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref.slice(2).split('/').reduce((o: Json, k) => o[k], doc);
    return deref(doc, target);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(doc, v)]));
}
