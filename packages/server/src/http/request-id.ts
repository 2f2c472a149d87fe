// Every request gets an id of ours (never the client's header), and every JSON object we answer carries
// it as request_id (docs/api.md#conventions), placed first: the one place it is added to answers, so
// handlers never set it.
import type { App } from '../app-type.ts';
import { ids } from '../ids.ts';

/** Fastify options, given when the instance is made. */
export const requestIdOptions = {
  genReqId: () => ids.request(),
  requestIdHeader: false,
} as const;

export function requestIdInAnswers(app: App) {
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    if (payload && typeof payload === 'object' && !Array.isArray(payload) && !('request_id' in payload)) {
      return done(null, { request_id: request.id, ...payload });
    }
    done(null, payload);
  });
}
