// fast-check arbitraries for the fuzz suite (docs/decisions.md#fuzz-suite): values that a route's schema
// accepts and values that break it, derived from the JSON Schema the routes' TypeBox schemas are, and the
// hostile strings, bodies and headers a careless or malicious client sends.
import fc from 'fast-check';

/** The JSON Schema keywords our TypeBox schemas use. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  format?: string;
  default?: unknown;
}

/** Text that breaks naive handling: control characters, bidi overrides, lone surrogates, injections. */
export const ODD_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t',
  '\u0000',
  'a\u0000b',
  '\r\n',
  'Ada\r\nBcc: all@example.com',
  '\n\n<html>',
  '\u202Eevil.exe',
  '\u200B',
  '\uFEFF',
  '\u2028\u2029',
  '\uD800',
  'x\uDC00y',
  '\uDBFF\uDFFF',
  '\uDFFF\uDBFF',
  '😀',
  '👩‍👩‍👧‍👦',
  'e\u0301\u0301\u0301',
  'İı',
  'ß',
  '\u0085',
  '\u001B[31mred',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '"; drop table sessions; --',
  '$' + '{jndi:ldap://x/a}',
  '{{7*7}}',
  '../../etc/passwd',
  '%00',
  '%E0%A4%A',
  '\\',
  '"',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  '0',
  '-1',
  '1e400',
  'NaN',
  'Infinity',
  'x'.repeat(201),
  'é'.repeat(300),
  '😀'.repeat(130),
];

/** One UTF-16 code unit of any value, lone surrogates included: `unit: 'binary'` never makes those. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Any string up to `maxLength` units, ASCII, any Unicode, any UTF-16, or one of ODD_STRINGS. */
export function oddString(maxLength = 40): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ maxLength }), weight: 3 },
    { arbitrary: fc.string({ maxLength, unit: 'binary' }), weight: 2 },
    { arbitrary: fc.string({ maxLength, unit: anyCodeUnit }), weight: 1 },
    { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 3 },
  );
}

/** Any JSON value, shallow: a value of the wrong type wherever it is put. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, 1, -1, 0.5, 2 ** 53 + 2, -(2 ** 63), 1e308, '', '1', [], {}),
  fc.jsonValue({ maxDepth: 2 }),
  oddString(),
);

const typesOf = (schema: JsonSchema): string[] =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];

const MAX_ARRAY = 6;

/** Values the schema accepts, or nearly: strings may be odd, within the length the schema allows. */
export function validOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map(validOf));
  if (schema.allOf) return validOf(Object.assign({}, ...schema.allOf));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => validOf({ ...schema, type })));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum ?? -1_000_001) + 1;
      const max = schema.maximum ?? 1_000_000;
      const int = fc.oneof(
        fc.integer({ min, max }),
        fc.constantFrom(...new Set([min, max, Math.max(min, Math.min(max, 0))])),
      );
      return types[0] === 'integer' ? int : fc.oneof(int, fc.double({ min, max, noNaN: true }));
    }
    case 'string':
      return stringOf(schema);
    case 'array': {
      const items = validOf(schema.items ?? {});
      const constraints = {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? MAX_ARRAY, MAX_ARRAY)),
      };
      return schema.uniqueItems
        ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
        : fc.array(items, constraints);
    }
    case 'object':
      return objectOf(schema);
    default:
      return anyJson;
  }
}

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 64;
  const fits = (s: string) => [...s].length >= min && [...s].length <= max;
  const odd = oddString(Math.min(max, 40)).filter(fits);
  const edges = fc.constantFrom('x'.repeat(Math.max(min, 1)), 'y'.repeat(max));
  switch (schema.format) {
    case 'email':
      return fc.oneof({ arbitrary: fc.emailAddress().filter(fits), weight: 4 }, odd);
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
      return fc.oneof({ arbitrary: fc.webUrl().filter(fits), weight: 4 }, odd);
    default:
      return fc.oneof({ arbitrary: odd, weight: 4 }, edges);
  }
}

function objectOf(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0 && schema.patternProperties) {
    const value = validOf(Object.values(schema.patternProperties)[0] ?? {});
    return fc.dictionary(oddString(20), value, {
      maxKeys: Math.min(schema.maxProperties ?? 5, 5),
      noNullPrototype: true,
    });
  }
  const model = Object.fromEntries(properties.map(([name, s]) => [name, validOf(s)]));
  return fc.record(model, { requiredKeys: schema.required ?? [] }) as fc.Arbitrary<Record<string, unknown>>;
}

/** Values that break the schema somewhere: a wrong type, a bound crossed, a field missing or unknown. */
export function brokenOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = typesOf(schema);
  const options: fc.Arbitrary<unknown>[] = [anyJson];
  if (schema.enum) options.push(oddString(20).filter((s) => !schema.enum?.includes(s)));
  if (types.includes('integer') || types.includes('number')) {
    const edges: unknown[] = [0.5, '1', null, true, Number.MAX_SAFE_INTEGER + 2, -1e21];
    if (schema.minimum !== undefined) edges.push(schema.minimum - 1);
    if (schema.maximum !== undefined) edges.push(schema.maximum + 1, schema.maximum * 1000);
    options.push(fc.constantFrom(...edges));
  }
  if (types.includes('string')) {
    const max = schema.maxLength ?? 64;
    options.push(
      fc.constantFrom('z'.repeat(max + 1), '😀'.repeat(max + 1), 42, ['x'], { x: 'y' }),
      oddString(),
    );
    if (schema.minLength) options.push(fc.constant(''));
  }
  if (types.includes('array')) {
    const items = schema.items ?? {};
    options.push(
      fc.array(brokenOf(items), { minLength: 1, maxLength: 3 }),
      fc.constant(Array.from({ length: (schema.maxItems ?? 10) + 1 }, (_, i) => i)),
      fc.constant([]),
      validOf(items),
    );
  }
  if (types.includes('object')) {
    const properties = schema.properties ?? {};
    const names = Object.keys(properties);
    const valid = objectOf(schema);
    // A field of the wrong kind.
    if (names.length > 0) {
      options.push(
        fc
          .tuple(valid, fc.constantFrom(...names))
          .chain(([value, name]) =>
            brokenOf(properties[name] ?? {}).map((bad) => ({ ...value, [name]: bad })),
          ),
      );
    }
    // A required field missing.
    if (schema.required?.length) {
      options.push(
        fc.tuple(valid, fc.constantFrom(...schema.required)).map(([value, name]) => {
          const { [name]: _gone, ...rest } = value;
          return rest;
        }),
      );
    }
    // An unknown field, prototype names included (computed keys make own properties, which JSON.stringify writes).
    options.push(
      fc
        .tuple(valid, fc.constantFrom('extra', '__proto__', 'constructor', 'prototype', ''), anyJson)
        .map(([value, name, extra]) => ({ ...value, [name]: extra })),
    );
  }
  return fc.oneof(...options);
}

const deep = (depth: number, open: string, close: string, inner = '') =>
  open.repeat(depth) + inner + close.repeat(depth);

/**
 * JSON text no well-behaved client sends, built around a value the route would take: nested past any
 * sane depth, with duplicate or prototype keys, a BOM, broken syntax, numbers JavaScript cannot hold.
 */
export function hostileText(valid: unknown): fc.Arbitrary<string> {
  const text = JSON.stringify(valid ?? {}) ?? '{}';
  const isObject = text.startsWith('{') && text.length > 2;
  const firstKey = isObject ? (/^\{("(?:[^"\\]|\\.)*")/.exec(text)?.[1] ?? '"a"') : '"a"';
  const inObject = (extra: string) => (isObject ? `${text.slice(0, -1)},${extra}}` : `{${extra}}`);
  // Thunks, so that only the text drawn is built: some are hundreds of kilobytes.
  const texts: (() => string)[] = [
    () => inObject(`${firstKey}:null`),
    () => inObject(`${firstKey}:${text}`),
    () => `{${firstKey}:1,${firstKey}:2,${firstKey}:3}`,
    () => inObject('"__proto__":{"isAdmin":true}'),
    () => inObject('"constructor":{"prototype":{"isAdmin":true}}'),
    () => inObject('"prototype":{}'),
    () => `{"__proto__":${text}}`,
    () => `[${text}]`,
    () => `\uFEFF${text}`,
    () => `${text} trailing`,
    () => `${text}${text}`,
    () => text.slice(0, Math.max(1, text.length - 1)),
    () => text.replace(/"/g, "'"),
    () => `/* comment */${text}`,
    () => inObject('"n":1e400'),
    () => inObject('"n":-1e400'),
    () => inObject(`"n":${'9'.repeat(5000)}`),
    () => inObject('"n":NaN'),
    () => inObject('"n":0x10'),
    () => inObject('"s":"\\ud800"'),
    () => inObject('"s":"\\u0000\\r\\n\\u202e"'),
    () => inObject('"s":"\\x41"'),
    () => inObject(`"k${'k'.repeat(10_000)}":1`),
    () => `{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
    () => `[${'0,'.repeat(30_000)}0]`,
    ...['null', 'true', '0', '""', '[]', '{}', '{', ']', '\u0000', ' ', 'undefined'].map((t) => () => t),
  ];
  const nested = (depth: number): (() => string)[] => [
    () => deep(depth, '[', ']'),
    () => deep(depth, '{"a":', '}', '1'),
    () => deep(depth, '[{"a":', '}]', '1'),
    () => inObject(`"x":${deep(depth, '[', ']')}`),
    () => deep(depth, '[', ''),
    () => `"${'['.repeat(depth)}"`,
  ];
  return fc.oneof(
    fc
      .constantFrom(63, 64, 65, 66, 100, 1000, 5000, 50_000)
      .chain((depth) => fc.constantFrom(...nested(depth)))
      .map((build) => build()),
    fc.constantFrom(...texts).map((build) => build()),
  );
}

/** Content types: JSON spelt every way, and bodies of other kinds. undefined sends none. */
export const contentTypes: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'application/json;;;',
      'application/json, text/plain',
      'application/jsonx',
      'application/vnd.api+json',
      'application/problem+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      '',
      'json',
    ),
    weight: 3,
  },
);

/**
 * Idempotency-Key values: none, a few reused keys (so replays, reuse and in-progress answers happen),
 * and keys the format refuses. Only bytes an HTTP client can put in a header (tab, 0x20-0x7e, 0x80-0xff).
 */
export const idempotencyKeys: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 10 },
  { arbitrary: fc.constantFrom('key-1', 'key-2', 'key-3'), weight: 4 },
  { arbitrary: fc.uuid(), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'has space',
      '\tkey',
      'k'.repeat(255),
      'k'.repeat(256),
      'k'.repeat(4000),
      'clé',
      '\xff\xfe',
      '"quoted"',
      '../../x',
      '%00',
      ['key-1', 'key-2'],
      ['key-1', 'key-1'],
    ),
    weight: 3,
  },
  {
    arbitrary: fc.string({ minLength: 1, maxLength: 300, unit: 'binary-ascii' }).map((s) =>
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters no header may carry
      s.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '_'),
    ),
    weight: 2,
  },
);

/** A path segment, ready for a URL: escapes valid and broken, unicode, dots, overlong. */
export const oddSegments: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '%2e%2e',
    '%2F',
    '%00',
    '%',
    '%zz',
    '%E0%A4%A',
    '%ED%A0%80',
    '%F0%9F%98%80',
    '%C0%AF',
    '%25',
    'sess_',
    'sess_%20',
    'x'.repeat(100),
    'x'.repeat(101),
    'x'.repeat(2000),
    '\xe9',
    '\xff',
    ';a=b',
    '*',
    '~',
  ),
  oddString(60).map(encodeURIComponentLoosely),
);

/** encodeURIComponent, but a lone surrogate (which it refuses) is written as a broken escape. */
export function encodeURIComponentLoosely(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x')).concat('%ED%A0');
  }
}

/** Query text no form would send: repeats, brackets, broken escapes, no values, very long. */
export const oddQueries: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '?',
    '?&&&',
    '?=',
    '?=x',
    '?a',
    '?a=1&a=2',
    '?a[]=1&a[]=2',
    '?a[b]=1',
    '?a.b=1',
    '?%',
    '?%zz=1',
    '?a=%E0%A4%A',
    '?a=%ED%A0%80',
    '?a=%F0%9F%98%80',
    '?a=1;b=2',
    '?a=1#frag',
    '?__proto__=1',
    '?constructor[prototype][x]=1',
    '?__proto__[x]=1',
    `?a=${'x'.repeat(8000)}`,
    `?${Array.from({ length: 2000 }, (_, i) => `k${i}=${i}`).join('&')}`,
  ),
  fc
    .array(fc.tuple(oddString(12), oddString(20)), { minLength: 1, maxLength: 4 })
    .map(
      (pairs) =>
        `?${pairs.map(([k, v]) => `${encodeURIComponentLoosely(k)}=${encodeURIComponentLoosely(v)}`).join('&')}`,
    ),
);
