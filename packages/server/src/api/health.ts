// Liveness and readiness probes, outside the API prefix and outside authentication.
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { ping } from '../store/db.ts';

const Health = Type.Object({ request_id: Type.String(), status: Type.String() });

export function register(app: App, deps: Deps) {
  app.get(
    '/healthz',
    { schema: { hide: true, response: { 200: Health } }, config: { public: true } },
    async (request) => ({
      request_id: request.id,
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: Health, 503: Health } }, config: { public: true } },
    async (request, reply) => {
      const ready = await ping(deps.db);
      return reply
        .code(ready ? 200 : 503)
        .send({ request_id: request.id, status: ready ? 'ready' : 'database unreachable' });
    },
  );
}
