// Request validation with Ajv: bodies are never coerced (a "5" is not an amount), query strings and
// path parameters are (they arrive as text). Ajv's errors become sentences that name the field the way a
// merchant wrote it: `cart.items[2].quantity must be at least 1`.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS: its default import is the plugin function itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    // Errors carry the offending value, so a message can name it ("group.nope" is not an event type).
    verbose: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : paramAjv;
  return ajv.compile(schema);
};

/** Adds a shared schema (with $id) to both validators so routes may $ref it. */
export function addSharedSchema(schema: { $id: string }) {
  for (const ajv of [bodyAjv, paramAjv]) if (!ajv.getSchema(schema.$id)) ajv.addSchema(schema);
}

/** `/cart/items/2/quantity` → `cart.items[2].quantity`; a key that is not a name, `metadata["order ref"]`. */
export function fieldPath(instancePath: string, root: string): string {
  let path = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else if (!/^[A-Za-z_$][\w$]*$/.test(part))
      path += `[${JSON.stringify(part.length > 60 ? `${part.slice(0, 60)}…` : part)}]`;
    else path += path ? `.${part}` : part;
  }
  return path || 'body';
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

export function describeError(error: ErrorObject, root: string): string {
  // A schema may word its own refusal (NoBody in api/schemas.ts): one sentence for whatever broke it.
  const own = (error.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof own === 'string') return own;
  const at = fieldPath(error.instancePath, root);
  const join = (name: string) => (at === 'body' ? name : `${at}.${name}`);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${join(String(p.additionalProperty))} is not a known field`;
    case 'type':
      return `${at} must be ${String(p.type).split(',').map(article).join(' or ')}`;
    case 'minimum':
      return `${at} must be at least ${p.limit}`;
    case 'maximum':
      return `${at} must be at most ${p.limit}`;
    case 'exclusiveMinimum':
      return `${at} must be greater than ${p.limit}`;
    case 'minLength':
      return p.limit === 1 ? `${at} must not be empty` : `${at} must be at least ${p.limit} characters`;
    case 'maxLength':
      return `${at} must be at most ${p.limit} characters`;
    case 'minItems':
      return `${at} must have at least ${p.limit} ${p.limit === 1 ? 'element' : 'elements'}`;
    case 'maxItems':
      return `${at} must have at most ${p.limit} elements`;
    case 'maxProperties':
      return `${at} must have at most ${p.limit} keys`;
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      // Name the value sent when it is short text; anything else would only bloat the message.
      const got =
        typeof error.data === 'string' && error.data.length <= 64
          ? ` (got ${JSON.stringify(error.data)})`
          : '';
      return `${at} must be one of ${allowed}${got}`;
    }
    case 'format':
      return `${at} must be a valid ${p.format}`;
    case 'pattern':
      return `${at} is not in the expected format`;
    case 'uniqueItems':
      return `${at} must not contain duplicates`;
    default:
      return `${at} ${error.message ?? 'is not valid'}`;
  }
}

/** Every Ajv error of one request part as sentences, without repeats. */
export function describeErrors(errors: ErrorObject[]): string[] {
  return [...new Set(errors.map((e) => describeError(e, '')))];
}
