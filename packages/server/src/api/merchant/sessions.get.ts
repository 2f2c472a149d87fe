// GET /sessions/{sessionId} — one session with its group (docs/api.md#read-a-session). The SDK polls
// it with the publishable key, so the customer is shown to secret keys only.
import type { App } from '../../app-type.ts';
import type { Deps } from '../../deps.ts';
import { getSession } from '../../flows/sessions.ts';
import type { SessionWithMembers } from '../../store/sessions.ts';
import { sessionToWire } from '../../wire/mappers.ts';
import { SessionDetailSchema } from '../../wire/schemas.ts';
import { callerOf } from '../auth.ts';
import { AUTH_ERRORS, rateLimitConfig, responses, SessionParams } from '../schemas.ts';

/** The wire shape, made once per cached read: the SDK polls the same session over and over. */
const details = new WeakMap<Readonly<SessionWithMembers>, { publishable?: object; secret?: object }>();

function detailOf(found: Readonly<SessionWithMembers>, withCustomer: boolean): object {
  let memo = details.get(found);
  if (!memo) {
    memo = {};
    details.set(found, memo);
  }
  const kind = withCustomer ? 'secret' : 'publishable';
  memo[kind] ??= sessionToWire(found.session, found.members, found.attempts, found.disputes, withCustomer);
  return memo[kind];
}

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
      config: { ...rateLimitConfig(deps, 'SESSIONS_GET'), auth: 'publishable-or-secret' },
    },
    async (request) => {
      const caller = callerOf(request);
      const found = await getSession(deps, caller.merchant.id, request.params.sessionId);
      return detailOf(found, caller.keyKind === 'secret');
    },
  );
}
