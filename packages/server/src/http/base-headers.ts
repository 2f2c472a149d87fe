// The headers every answer carries (api/errors.ts BASE_HEADERS) and its x-request-id, set before
// anything can answer. A callback, not a promise: it is on every request's path.
import { BASE_HEADERS } from '../api/errors.ts';
import type { App } from '../app-type.ts';

export function baseHeaders(app: App) {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(BASE_HEADERS);
    reply.header('x-request-id', request.id);
    done();
  });
}
