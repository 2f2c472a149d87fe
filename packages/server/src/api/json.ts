// Checks on request bodies and URLs that the JSON parser and the schemas cannot make
// (docs/api.md#errors): JSON nested deeper than MAX_JSON_DEPTH, and the NUL character, which PostgreSQL
// cannot store in text and which no field of ours has a use for.
import { ServiceError } from '../errors.ts';
import { fieldPath } from './validation.ts';

/** Arrays and objects nested deeper than this are not JSON we read. No body of ours nests past 5. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text opens more than `max` arrays or objects inside one another. One pass and no
 * recursion, so it cannot overflow whatever the text is; brackets inside strings are skipped. It does not
 * check the text is JSON: the parser does that next.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

export const tooDeep = () =>
  new ServiceError('invalid_json', {
    message: `The request body is not valid JSON: it is nested deeper than ${MAX_JSON_DEPTH} levels.`,
  });

const pointer = (path: string, key: string) => `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The JSON pointer (`/customer/name`) of the first string or key holding NUL in a parsed body, or
 * undefined. Only called when the text has a `\u0000` escape (JSON cannot carry a raw NUL in a string).
 * Iterative, though the body is at most MAX_JSON_DEPTH deep by now.
 */
export function nulAt(body: unknown): string | undefined {
  const stack: [unknown, string][] = [[body, '']];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`]);
    } else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value).reverse()) {
        if (key.includes('\u0000')) return pointer(path, key);
        stack.push([v, pointer(path, key)]);
      }
    }
  }
  return undefined;
}

/** The refusal of a body with NUL at `path`, coded as a schema error there would be. */
export function nulRefused(path: string): ServiceError {
  const message = `${fieldPath(path, '')} must not contain the NUL character (\\u0000)`;
  return new ServiceError(path.startsWith('/cart') ? 'invalid_cart' : 'invalid_request', {
    message,
    details: [message],
  });
}

/** A JSON text that may hold an escaped NUL; cheap, so most bodies are never walked. */
export const mayHoldNul = (text: string) => /\\u0000/i.test(text);

/** A URL whose path or query has an escaped NUL (%00), which no id, token or parameter of ours holds. */
export const urlHoldsNul = (url: string) => url.includes('%00');

export const nulInUrl = () =>
  new ServiceError('invalid_request', {
    message: 'The request URL must not contain the NUL character (%00).',
  });
