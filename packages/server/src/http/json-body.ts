// JSON only: a text/plain body is 400 invalid_json like any other non-JSON body. An empty body is no
// body, because clients that always send Content-Type: application/json call DELETE and the body-less
// POSTs that way; a route that needs a body still answers 400 through its schema. JSON nested deeper
// than MAX_JSON_DEPTH is refused before it is parsed (docs/api.md#errors): code that walks a body
// recursively (JSON.stringify, the validator) must never meet one deep enough to overflow the stack.
// Fastify's parser refuses __proto__ and constructor.prototype keys (prototype poisoning). A NUL in any
// string is refused, naming the field: PostgreSQL cannot store it (api/json.ts). Bytes that are not UTF-8
// are refused too, rather than read as U+FFFD.
import { isUtf8 } from 'node:buffer';
import { invalidJsonBody, notUtf8 } from '../api/errors.ts';
import { MAX_JSON_DEPTH, mayHoldNul, nestedDeeperThan, nulAt, nulRefused, tooDeep } from '../api/json.ts';
import type { App } from '../app-type.ts';

export function jsonBodies(app: App) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    // JSON text is UTF-8 (RFC 8259): other bytes would be read as U+FFFD and stored as such, silently.
    if (!isUtf8(bytes)) return done(notUtf8(), undefined);
    const text = bytes.toString('utf8');
    if (nestedDeeperThan(text, MAX_JSON_DEPTH)) return done(tooDeep(), undefined);
    return parseJson(request, text, (error, value) => {
      if (error) return done(invalidJsonBody(text), undefined);
      const nul = mayHoldNul(text) ? nulAt(value) : undefined;
      return nul === undefined ? done(null, value) : done(nulRefused(nul), undefined);
    });
  });
}
