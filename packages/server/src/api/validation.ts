// Request validation with Ajv: bodies are never coerced (a "5" is not an amount), query strings and
// path parameters are (they arrive as text). Ajv's errors become sentences that name the field the way a
// merchant wrote it: `cart.items[2].quantity must be at least 1`.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { CART_TEXT_PATTERN, PLAIN_TEXT_PATTERN } from '../wire/schemas.ts';

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

/** A JSON type as a reader would say it: `an integer`, `true or false`. */
const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};
const typeName = (type: string) => TYPE_NAMES[type] ?? `of type ${type}`;

/** The formats our schemas use, as what a client should send. */
const FORMAT_NAMES: Record<string, string> = {
  email: 'an email address such as name@example.com',
  uri: 'an absolute URL such as https://example.com/path',
  url: 'an absolute URL such as https://example.com/path',
  'date-time': 'an ISO 8601 date and time such as 2026-11-21T10:00:00Z',
  date: 'a date such as 2026-11-21',
  time: 'a time such as 10:00:00Z',
  uuid: 'a UUID',
  hostname: 'a host name such as example.com',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};

const count = (n: unknown, noun: string) => `${n} ${n === 1 ? noun : `${noun}s`}`;
const quote = (value: unknown) => JSON.stringify(value) ?? String(value);
const list = (values: unknown[]) => values.map(quote).join(', ');

/** ` (got "dollars")` when the value sent is short text, so the client sees what we read; else nothing. */
const got = (data: unknown) =>
  typeof data === 'string' && data.length <= 64 ? ` (got ${JSON.stringify(data)})` : '';

/** The schema's own description, when it has one, to say what the field expects. */
const expected = (error: ErrorObject) => {
  const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
  return typeof description === 'string' ? `: ${description.replace(/\.$/, '')}` : '';
};

/** The values a union of constants (`anyOf: [{const}, …]` or enums) allows, or undefined when it is not one. */
function unionValues(branches: unknown): unknown[] | undefined {
  if (!Array.isArray(branches)) return undefined;
  const values: unknown[] = [];
  for (const branch of branches as { const?: unknown; enum?: unknown[] }[]) {
    if (branch && 'const' in branch) values.push(branch.const);
    else if (Array.isArray(branch?.enum)) values.push(...branch.enum);
    else return undefined;
  }
  return values;
}

/**
 * One Ajv error as a sentence of ours: the field as the client wrote it, what is wrong and what is
 * expected. Every keyword gets its own wording; Ajv's own message never reaches a client (docs/api.md#errors).
 * @internal Exported for the cart-rules tests.
 */
export function describeError(error: ErrorObject, root: string): string {
  // A schema may word its own refusal (NoBody in api/schemas.ts): one sentence for whatever broke it.
  const own = (error.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof own === 'string') return own;
  const field = fieldPath(error.instancePath, root);
  // Under propertyNames the error is about a key of the object, not about the object.
  const at = error.propertyName === undefined ? field : `the key ${quote(error.propertyName)} of ${field}`;
  const join = (name: string) => (field === 'body' ? name : `${field}.${name}`);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(String(p.missingProperty))} is required`;
    case 'dependentRequired':
    case 'dependencies':
      return `${join(String(p.missingProperty))} is required when ${join(String(p.property))} is given`;
    case 'additionalProperties':
      return `${join(String(p.additionalProperty))} is not a known field`;
    case 'unevaluatedProperties':
      return `${join(String(p.unevaluatedProperty))} is not a known field`;
    case 'type':
      return `${at} must be ${String(p.type).split(',').map(typeName).join(' or ')}`;
    case 'minimum':
      return `${at} must be at least ${p.limit}`;
    case 'maximum':
      return `${at} must be at most ${p.limit}`;
    case 'exclusiveMinimum':
      return `${at} must be greater than ${p.limit}`;
    case 'exclusiveMaximum':
      return `${at} must be less than ${p.limit}`;
    case 'multipleOf':
      return `${at} must be a multiple of ${p.multipleOf}`;
    case 'minLength':
      return p.limit === 1 ? `${at} must not be empty` : `${at} must be at least ${p.limit} characters`;
    case 'maxLength':
      return `${at} must be at most ${p.limit} characters`;
    case 'minItems':
      return `${at} must have at least ${count(p.limit, 'element')}`;
    case 'maxItems':
    case 'additionalItems':
    case 'unevaluatedItems':
    case 'items':
      return `${at} must have at most ${count(p.limit ?? p.len, 'element')}`;
    case 'minProperties':
      return `${at} must have at least ${count(p.limit, 'key')}`;
    case 'maxProperties':
      return `${at} must have at most ${count(p.limit, 'key')}`;
    case 'uniqueItems': {
      const [first, second] = [Number(p.i), Number(p.j)].sort((a, b) => a - b);
      return `${at} must not contain duplicates (${at}[${first}] and ${at}[${second}] are the same)`;
    }
    case 'contains': {
      const [min, max] = [p.minContains ?? 1, p.maxContains];
      const many = max === undefined ? `at least ${count(min, 'element')}` : `from ${min} to ${max} elements`;
      return `${at} must contain ${many} of the expected form${expected(error)}`;
    }
    case 'enum':
      return `${at} must be one of ${list(p.allowedValues as unknown[])}${got(error.data)}`;
    case 'const':
      return `${at} must be ${quote(p.allowedValue)}${got(error.data)}`;
    case 'anyOf':
    case 'oneOf': {
      const values = unionValues(error.schema);
      if (values) return `${at} must be one of ${list(values)}${got(error.data)}`;
      if (error.keyword === 'oneOf' && p.passingSchemas)
        return `${at} fits more than one of the forms it may take; send exactly one${expected(error)}`;
      return `${at} is none of the forms it may take${expected(error)}`;
    }
    case 'format':
      return `${at} must be ${FORMAT_NAMES[String(p.format)] ?? `in ${p.format} format`}`;
    case 'formatMinimum':
    case 'formatExclusiveMinimum':
      return `${at} must be ${p.comparison === '>' ? 'after' : 'at or after'} ${p.limit}`;
    case 'formatMaximum':
    case 'formatExclusiveMaximum':
      return `${at} must be ${p.comparison === '<' ? 'before' : 'at or before'} ${p.limit}`;
    case 'pattern':
      if (p.pattern === PLAIN_TEXT_PATTERN)
        return `${at} must not contain control characters (such as line breaks or NUL), bidirectional overrides or unpaired surrogates`;
      if (p.pattern === CART_TEXT_PATTERN)
        return `${at} must not contain NUL or other control characters (line breaks and tabs are fine), bidirectional overrides or unpaired surrogates`;
      return `${at} is not in the expected format${expected(error)}`;
    case 'propertyNames':
      return `${field} has a key that is not allowed: ${quote(p.propertyName)}`;
    case 'false schema':
      return `${field} is not accepted here`;
    case 'not':
      return `${at} is a value that is not accepted here${expected(error)}`;
    case 'if':
      return `${at} does not meet the conditions for this field${expected(error)}`;
    case 'discriminator':
      return `${join(String(p.tag))} must name one of the kinds this field accepts`;
    default:
      return `${at} is not a value this field accepts${expected(error)}`;
  }
}

/** `/x-service-signature` → `the X-Service-Signature header`. */
const headerName = (instancePath: string) =>
  `the ${instancePath.slice(1).replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())} header`;

/** Every Ajv error of one request part (`body`, `querystring`, `headers`…) as sentences, without repeats. */
export function describeErrors(errors: ErrorObject[], part = 'body'): string[] {
  const describe = (e: ErrorObject) =>
    part === 'headers' && e.instancePath.lastIndexOf('/') === 0
      ? describeError({ ...e, instancePath: '' }, headerName(e.instancePath))
      : describeError(e, '');
  // A union (anyOf, oneOf) reports every branch's failure and then its own: one sentence for the union
  // says it better than one per branch. An `if` is followed by the error of its `then` or `else`, and
  // propertyNames by the error of the key, which say what is wrong.
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  // `contains` too reports each element that failed it, before its own sentence.
  const groups = [...unions, ...errors.filter((e) => e.keyword === 'contains')];
  const branchesOf = (group: ErrorObject) =>
    errors.filter((e) => e !== group && e.schemaPath.startsWith(`${group.schemaPath}/`));
  const inUnion = (e: ErrorObject) => groups.some((g) => branchesOf(g).includes(e));
  const followed = (e: ErrorObject) =>
    (e.keyword === 'if' && errors.length > 1) ||
    (e.keyword === 'propertyNames' && errors.some((other) => other.propertyName !== undefined));
  const sentences = errors
    .filter((e) => !inUnion(e) && !followed(e))
    .map((e) => (unions.includes(e) ? describeUnion(e, branchesOf(e)) : describe(e)));
  return [...new Set(sentences)];
}

/** A union whose branches all failed: the values or types it allows, else what each branch wanted. */
function describeUnion(union: ErrorObject, branches: ErrorObject[]): string {
  const plain = describeError(union, '');
  if (unionValues(union.schema) || (union.params as { passingSchemas?: unknown }).passingSchemas)
    return plain;
  const same = branches.filter((b) => b.instancePath === union.instancePath);
  if (same.length > 0 && same.length === branches.length && same.every((b) => b.keyword === 'type')) {
    const types = same.flatMap((b) => String((b.params as { type: unknown }).type).split(','));
    return `${fieldPath(union.instancePath, '')} must be ${[...new Set(types)].map(typeName).join(' or ')}`;
  }
  const wanted = [...new Set(branches.map((b) => describeError(b, '')))];
  return wanted.length > 0 ? `${plain}; either ${wanted.join(', or ')}` : plain;
}
