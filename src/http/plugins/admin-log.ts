// D142: every change an operator makes through the admin API leaves a line in the log: which action (method and
// route), on what (the path's ids), with which fields (their names only: a body may hold a charger password, an
// OCMF key or an IBAN), and how it ended (the status). One admin token means "who" is the holder of that token; the
// line says what was done and when. Reads (GET) are not logged here; the request line has them.
import type { App } from '../types.ts';

export function registerAdminLog(app: App): void {
  app.addHook('onResponse', async (req, reply) => {
    if (req.method === 'GET' || req.method === 'HEAD') return;
    const auth = req.routeOptions.config?.auth as Record<string, unknown> | undefined;
    if (!auth || !('admin' in auth)) return;
    const body = req.body;
    const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).slice(0, 20) : [];
    req.log.info(
      { event: 'admin.action', method: req.method, route: req.routeOptions.url, params: req.params, fields, status: reply.statusCode },
      'admin: action',
    );
  });
}
