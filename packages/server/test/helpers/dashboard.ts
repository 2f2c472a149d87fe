// What the dashboard suites share: a dashboard user made the way the CLI makes one, signing in with a
// one-time link over HTTP as a browser would (the link's page, then its form), and requests carrying the
// session cookie, the CSRF token and our Origin.
import assert from 'node:assert/strict';
import { addDashboardUser, issueSignInLink } from '../../src/flows/dashboard-access.ts';
import type { DashboardRole, DashboardUser } from '../../src/store/dashboard.ts';
import type { TestApp, TestMerchant } from './app.ts';

let counter = 0;

export async function dashboardUser(
  t: TestApp,
  role: DashboardRole,
  merchant: TestMerchant = t.merchant,
  email = `${role}${++counter}@shop.example`,
): Promise<DashboardUser> {
  return addDashboardUser(t.deps.db, { merchantId: merchant.merchant.id, email, role }, t.deps.clock.now());
}

/** A fresh sign-in link's token for the user (as `group-checkout dashboard link` makes it). */
export async function linkToken(t: TestApp, user: DashboardUser): Promise<string> {
  const url = await issueSignInLink(t.deps.db, t.deps.config.publicPayUrl, user.id, t.deps.clock.now());
  return new URL(url).searchParams.get('token') as string;
}

export interface DashboardResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** {pay_url}'s origin, which every change must name. */
export const payOrigin = (t: TestApp) => new URL(t.deps.config.publicPayUrl).origin;

export async function dashboardRequest(
  t: TestApp,
  method: 'GET' | 'POST',
  path: string,
  o: { cookie?: string; form?: Record<string, string>; origin?: string | null } = {},
): Promise<DashboardResponse> {
  const headers: Record<string, string> = {};
  if (o.cookie) headers.cookie = o.cookie;
  const origin = o.origin === undefined ? payOrigin(t) : o.origin;
  if (method === 'POST' && origin !== null) headers.origin = origin;
  let body: string | undefined;
  if (o.form) {
    body = new URLSearchParams(o.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const response = await fetch(`${t.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
  return {
    status: response.status,
    headers: response.headers,
    text: await response.text(),
    location: response.headers.get('location'),
  };
}

export interface SignedIn {
  /** The Cookie header to send. */
  cookie: string;
  /** The raw Set-Cookie the sign-in answered. */
  setCookie: string;
  csrf: string;
}

/** Signs the user in with a fresh link and reads the CSRF token from a page. */
export async function signIn(t: TestApp, user: DashboardUser): Promise<SignedIn> {
  const token = await linkToken(t, user);
  const res = await dashboardRequest(t, 'POST', '/dashboard/sign-in', { form: { token } });
  assert.equal(res.status, 303, res.text);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] as string;
  const page = await dashboardRequest(t, 'GET', '/dashboard/settings', { cookie });
  assert.equal(page.status, 200, page.text);
  return { cookie, setCookie, csrf: csrfOf(page.text) };
}

export function csrfOf(pageHtml: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(pageHtml);
  assert.ok(match, 'the page carries a CSRF token');
  return match[1] as string;
}

/** A change as the dashboard's forms send it. */
export const change = (t: TestApp, s: SignedIn, path: string, form: Record<string, string> = {}) =>
  dashboardRequest(t, 'POST', path, { cookie: s.cookie, form: { _csrf: s.csrf, ...form } });
