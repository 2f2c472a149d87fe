// What a pay-page token opened, carried on the request from the plugin's hook (index.ts) to the handler.
import type { FastifyRequest } from 'fastify';
import type { Session } from '../../store/sessions.ts';
import type { PageRole } from '../../wire/mappers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session a pay-page token opened, and as whom (set before Idempotency-Key is claimed). */
    payAccess?: { session: Session; role: PageRole };
  }
  interface FastifyContextConfig {
    /** The pay-page token a route takes in ?access=: any (organizer or group), or the organizer's. */
    access?: 'any' | 'organizer';
  }
}

/** The session the route's token opened; for handlers of routes with config.access only. */
export function payAccessOf(request: FastifyRequest): { session: Session; role: PageRole } {
  if (!request.payAccess) throw new Error('route takes no access token');
  return request.payAccess;
}
