// GET /sessions/{sessionId} — one session with its group (docs/api.md#read-a-session). The SDK polls
// it with the publishable key, so the customer is shown to secret keys only.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { getSession } from '../../flows/sessions.ts';
import { sessionToWire } from '../../wire/mappers.ts';
import { SessionDetailSchema } from '../../wire/schemas.ts';
import { sendKept } from '../answer-bytes.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses, SessionParams } from '../schemas.ts';

export function register(app: App, deps: Deps) {
  app.get(
    '/sessions/:sessionId',
    {
      schema: {
        summary: 'Retrieve a session',
        tags: ['sessions'],
        params: SessionParams,
        response: responses(SessionDetailSchema, [...AUTH_ERRORS, 404]),
      },
      config: { auth: 'publishable-or-secret', ...rateLimitConfig(deps, 'SESSIONS_GET') },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const found = await getSession(deps, caller.merchant.id, request.params.sessionId);
      // The SDK polls the same session over and over: its answer is serialized once per cached read.
      const withCustomer = caller.keyKind === 'secret';
      const source = { value: found, variant: caller.keyKind, cached: deps.db.dialect === 'sqlite' };
      return sendKept(request, reply, source, () =>
        sessionToWire(found.session, found.members, found.attempts, found.disputes, withCustomer),
      );
    },
  );
}
