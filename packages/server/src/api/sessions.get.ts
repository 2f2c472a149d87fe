// GET /sessions/{sessionId} — one session with its group (SPEC.md §2.8). The SDK polls it with the
// publishable key, so the customer is shown to secret keys only.
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { findSessionWithMembers } from '../store/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from './schemas.ts';
import { SessionDetailSchema } from './sessions.schemas.ts';
import { sessionDetail } from './sessions.wire.ts';

// No maxLength: an id that is too long is simply an unknown session (404), as SPEC.md §4.3 says; the
// router already caps path parameters at 100 characters.
export const SessionParams = Type.Object({ sessionId: Type.String() });

type Found = NonNullable<Awaited<ReturnType<typeof findSessionWithMembers>>>;

/** The wire shape, made once per cached read: the SDK polls the same session over and over. */
const details = new WeakMap<Found, { publishable?: object; secret?: object }>();

function detailOf(found: Found, withCustomer: boolean): object {
  let memo = details.get(found);
  if (!memo) {
    memo = {};
    details.set(found, memo);
  }
  const kind = withCustomer ? 'secret' : 'publishable';
  memo[kind] ??= sessionDetail(found.session, found.members, withCustomer);
  return memo[kind];
}

export function register(app: App, deps: Deps) {
  app.get(
    `${deps.config.apiPrefix}/sessions/:sessionId`,
    {
      schema: {
        summary: 'Retrieve a session',
        tags: ['sessions'],
        params: SessionParams,
        response: responses(SessionDetailSchema, [...AUTH_ERRORS, 404]),
      },
      config: rateLimitConfig(deps, 'SESSIONS_GET'),
      onRequest: authenticate(deps, 'publishable-or-secret'),
    },
    async (request) => {
      const found = await findSessionWithMembers(
        deps.db.kysely,
        merchantOf(request).id,
        request.params.sessionId,
      );
      if (!found) throw new ApiError('session_not_found');
      return { request_id: request.id, ...detailOf(found, request.auth?.keyKind === 'secret') };
    },
  );
}
