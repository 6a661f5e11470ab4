// Module hook used only by bench/server-child.ts: serves `ocpp-rpc` (CommonJS) to ES modules as a facade
// that names every export, so `import { TimeoutError } from 'ocpp-rpc'` links under plain Node (Node's
// CommonJS export detection sees only part of ocpp-rpc's exports). The benchmark warns when it is needed.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const FACADE = 'ere-bench:ocpp-rpc-facade';

export async function resolve(specifier, context, next) {
  if (specifier === 'ocpp-rpc' && !context.parentURL?.startsWith(FACADE)) return { url: FACADE, shortCircuit: true };
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url !== FACADE) return next(url, context);
  const realPath = require.resolve('ocpp-rpc');
  const names = Object.keys(require(realPath)).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default');
  const source = [
    `import { createRequire } from 'node:module';`,
    `const m = createRequire(${JSON.stringify(realPath)})(${JSON.stringify(realPath)});`,
    `export default m;`,
    ...names.map((n) => `export const ${n} = m.${n};`),
  ].join('\n');
  return { format: 'module', source, shortCircuit: true };
}
