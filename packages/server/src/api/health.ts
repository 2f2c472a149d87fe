// Liveness and readiness probes, outside the API prefix and outside authentication.
import Type from 'typebox';
import type { App } from '../app-type.ts';
import type { Deps } from '../deps.ts';
import { databaseReady } from '../flows/housekeeping.ts';
import { withRequestId } from './schemas.ts';

const Health = withRequestId(Type.Object({ status: Type.String() }));

export function register(app: App, deps: Deps) {
  app.get(
    '/healthz',
    { schema: { hide: true, response: { 200: Health } }, config: { public: true } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    { schema: { hide: true, response: { 200: Health, 503: Health } }, config: { public: true } },
    async (_request, reply) => {
      const ready = await databaseReady(deps);
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'database unreachable' });
    },
  );
}
