// The fastify plugins that run before the routes, in this order: request metrics (GET /metrics), then the rate
// limits per credential (C1.5).
import type { Deps } from '../../deps.ts';
import type { App } from '../types.ts';
import { metricsPlugin } from './metrics.ts';
import { rateLimitPlugin } from './rate-limit.ts';
import { noStorePlugin } from './no-store.ts';

// D195: noStorePlugin marks the answers that carry a secret shown once `Cache-Control: no-store`
export const appPlugins: Array<(app: App, deps: Deps) => Promise<void> | void> = [metricsPlugin, rateLimitPlugin, noStorePlugin];
