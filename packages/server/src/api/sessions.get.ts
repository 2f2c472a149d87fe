// GET /sessions/{sessionId} — one session with its group (SPEC.md §2.8). The SDK polls it with the
// publishable key, so the customer is shown to secret keys only.
import Type from 'typebox';
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { findSessionById, listMembers } from '../store/sessions.ts';
import { authenticate, merchantOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { AUTH_ERRORS, rateLimitConfig, responses } from './schemas.ts';
import { SessionDetailSchema } from './sessions.schemas.ts';
import { sessionDetail } from './sessions.wire.ts';

// No maxLength: an id that is too long is simply an unknown session (404), as SPEC.md §4.3 says; the
// router already caps path parameters at 100 characters.
export const SessionParams = Type.Object({ sessionId: Type.String() });

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
      const session = await findSessionById(deps.db.kysely, merchantOf(request).id, request.params.sessionId);
      if (!session) throw new ApiError('session_not_found');
      const members = await listMembers(deps.db.kysely, session.id);
      return {
        request_id: request.id,
        ...sessionDetail(session, members, request.auth?.keyKind === 'secret'),
      };
    },
  );
}
