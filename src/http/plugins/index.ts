// The fastify plugins that run before the routes, in this order: request metrics (GET /metrics), then the rate
// limits per credential (C1.5).
import type { Deps } from '../../deps.ts';
import type { App } from '../types.ts';
import { metricsPlugin } from './metrics.ts';
import { rateLimitPlugin } from './rate-limit.ts';
import { responseHeadersPlugin } from './no-store.ts';

// D195, D233: responseHeadersPlugin marks the answers that carry a secret shown once or answer a credential
// `Cache-Control: no-store`, and adds nosniff to every answer and HSTS on an https base
export const appPlugins: Array<(app: App, deps: Deps) => Promise<void> | void> = [metricsPlugin, rateLimitPlugin, responseHeadersPlugin];
