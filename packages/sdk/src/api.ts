// The two merchant-API calls the SDK makes with the publishable key (docs/api.md#who-may-call-what): create
// a session, and read it (the polling fallback). Failures come back as GroupCheckoutError, never thrown.
import type { Config } from './options.ts';
import type { GroupCheckoutError } from './types.ts';

export type Result<T> = { ok: true; value: T } | { ok: false; error: GroupCheckoutError; status: number };

/** 128 random bits as hex: crypto.getRandomValues works on plain-http pages, randomUUID does not. */
function randomKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(
    '',
  );
}

export async function call<T>(
  config: Config,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Result<T>> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.publishableKey}`,
    'x-merchant-id': config.merchantId,
  };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    // One key per click: a retry of the same request by the browser or a proxy creates one session.
    headers['idempotency-key'] = randomKey();
  }
  let response: Response;
  try {
    response = await fetch(config.apiBaseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
    });
  } catch (e) {
    return {
      ok: false,
      status: 0,
      error: {
        code: 'network_error',
        message: `Could not reach Group Checkout at ${config.apiBaseUrl} (${(e as Error).message}).`,
      },
    };
  }
  let json: Record<string, unknown> | undefined;
  try {
    json = await response.json();
  } catch {}
  if (response.ok && json) return { ok: true, value: json as T };
  const requestId =
    (json?.request_id as string | undefined) ?? response.headers.get('x-request-id') ?? undefined;
  const error: GroupCheckoutError = {
    code:
      typeof json?.code === 'string'
        ? json.code
        : response.ok
          ? 'invalid_response'
          : `http_${response.status}`,
    message:
      typeof json?.error === 'string' ? json.error : `Group Checkout answered HTTP ${response.status}.`,
  };
  if (requestId) error.request_id = requestId;
  return { ok: false, status: response.status, error };
}
