// One check for every error answer the API gives: the status, the code, and the error shape of
// docs/api.md ("Errors"): exactly {request_id, error, code, details?} (with decline_code on a declined card
// and problems on a refused set-up), as JSON, with request_id also in X-Request-Id.
import assert from 'node:assert/strict';
import type { TestResponse } from './app.ts';

/**
 * Asserts that `res` is an error answer with `status` and (when given) `code`, in the documented shape.
 * `context` is prefixed to the failure messages (e.g. the input that was sent).
 */
export function assertError(
  res: Pick<TestResponse, 'status' | 'headers' | 'body' | 'text'>,
  status: number,
  code?: string,
  context?: string,
): void {
  const say = (what: string) => (context ? `${context}: ${what}` : what);
  assert.equal(res.status, status, say(res.text));
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, say('an error body is JSON'));
  assert.ok(
    res.body !== null && typeof res.body === 'object' && !Array.isArray(res.body),
    say(`the body is a JSON object: ${res.text}`),
  );
  const { request_id, error, code: actual, details, decline_code, problems, ...rest } = res.body;
  assert.deepEqual(
    rest,
    {},
    say('no fields beyond request_id, error, code, details (and decline_code, problems)'),
  );
  // problems (a refused set-up's refusals as data, docs/api.md) come with invalid_group only.
  if (problems !== undefined) {
    assert.equal(actual, 'invalid_group', say('problems only with invalid_group'));
    assert.ok(
      Array.isArray(problems) && problems.every((p: { code?: unknown }) => typeof p.code === 'string'),
      say('problems is a list of refusals, each with its code'),
    );
  }
  // decline_code comes with card_declined, and only with it.
  assert.equal(decline_code !== undefined, actual === 'card_declined', say('decline_code iff card_declined'));
  assert.match(request_id, /^req_[0-9A-Za-z]+$/, say('request_id'));
  assert.equal(res.headers.get('x-request-id'), request_id, say('X-Request-Id is the request_id'));
  assert.equal(typeof error, 'string', say('error is a string'));
  assert.ok(error.length > 0, say('error is not empty'));
  assert.equal(typeof actual, 'string', say('code is a string'));
  if (code !== undefined) assert.equal(actual, code, say(res.text));
  if (details !== undefined) {
    assert.ok(
      Array.isArray(details) && details.length > 0 && details.every((d: unknown) => typeof d === 'string'),
      say('details, when present, is a non-empty list of strings'),
    );
  }
}
