// The dashboard's cookie session and what every change must carry (docs/dashboard.md#signing-in): the
// cookie (HttpOnly, SameSite=Strict, and Secure with the __Host- prefix when {pay_url} is https), a CSRF
// token per session in every form, and an Origin that is {pay_url}'s own.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';

export interface CookieSettings {
  name: string;
  secure: boolean;
  /** {pay_url}'s origin: the only Origin a change may come from. */
  origin: string;
}

export function cookieSettings(config: Config): CookieSettings {
  const url = new URL(config.publicPayUrl);
  const secure = url.protocol === 'https:';
  return { name: secure ? '__Host-gc_dashboard' : 'gc_dashboard', secure, origin: url.origin };
}

/** The value of the cookie `name` in the request, if any. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

// Path=/ is what __Host- requires; the session is idle-limited on the server, so the cookie has no Max-Age.
export const setCookie = (c: CookieSettings, value: string) =>
  `${c.name}=${value}; Path=/; HttpOnly; SameSite=Strict${c.secure ? '; Secure' : ''}`;

export const clearCookie = (c: CookieSettings) =>
  `${c.name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${c.secure ? '; Secure' : ''}`;

/** A change from a page of ours: the browser's Origin header is {pay_url}'s origin (a missing one is refused). */
export const sameOrigin = (request: FastifyRequest, c: CookieSettings): boolean =>
  request.headers.origin === c.origin;

export function tokensMatch(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
