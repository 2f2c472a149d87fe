// Web origins as we accept them from a browser's Origin header, an operator's --allowed-origin or a stored
// row (docs/api.md#origins): exactly scheme://host[:port], nothing else, turned into one canonical spelling
// (lowercase, punycode host, no default port). Only the canonical value ever reaches a header or a page.
// Pure: no I/O.

/** What an origin may be made of before parsing: printable ASCII with no space, quote, `;`, `,` or `\`. */
const ORIGIN_SHAPE = /^(https?):\/\/([A-Za-z0-9.\-[\]:]+)$/i;

/** The longest label of a host name (RFC 1035 §2.3.4), in characters. */
const MAX_LABEL = 63;

/**
 * What is wrong with a host name's labels, in words, or undefined: each is 1–63 letters, digits or
 * hyphens, neither first nor last a hyphen. The name is the URL parser's: lowercase, punycode.
 */
function hostNameProblem(hostname: string): string | undefined {
  for (const label of hostname.split('.')) {
    if (label === '')
      return 'the host name has an empty part (two dots in a row, or a dot at its start or end)';
    if (label.length > MAX_LABEL)
      return `the host name has a part of ${label.length} characters; each part between dots is at most ${MAX_LABEL}`;
    if (label.startsWith('-') || label.endsWith('-'))
      return `the host name part "${label}" starts or ends with "-"`;
    if (!/^[a-z0-9-]+$/.test(label))
      return `the host name part "${label}" has a character other than a letter, a digit or "-"`;
  }
  return undefined;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** localhost, a name under .localhost, 127.x.y.z or [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    LOOPBACK_NAMES.has(hostname) || hostname.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}

/** Which origins an environment takes: https always; http on a loopback host in the sandbox only. */
export type OriginPolicy = 'sandbox' | 'production';

export type ParsedOrigin = { ok: true; origin: string } | { ok: false; reason: string };

const refuse = (reason: string): ParsedOrigin => ({ ok: false, reason });

/**
 * An origin (`https://shop.example`, `http://localhost:4100` in the sandbox) in its canonical spelling, or
 * why it is not one. `*`, `null`, a path, a query, credentials, spaces, `;`, quotes, non-ASCII text (a
 * browser sends a unicode host as punycode already) and anything the URL parser would mend silently
 * are refused, never repaired.
 */
export function parseOrigin(raw: string | undefined, policy: OriginPolicy): ParsedOrigin {
  if (raw === undefined || raw === '') return refuse('the request has no Origin header');
  if (raw.length > 255) return refuse('an origin is at most 255 characters');
  if (raw === 'null') return refuse('"null" is the origin of a sandboxed frame or a file, not of a web page');
  if (raw === '*') return refuse('"*" is not an origin');
  const shape = ORIGIN_SHAPE.exec(raw);
  if (!shape)
    return refuse(
      'an origin is scheme://host[:port] only: no path, query, spaces, ";", quotes or non-ASCII characters',
    );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not a URL');
  }
  // The parser accepts what a browser never sends as an Origin (a trailing dot, an empty port, a host it
  // rewrites); only a value that is already its own canonical form is taken, so what we store is what came.
  const canonical = url.origin;
  if (canonical === 'null' || canonical !== raw.toLowerCase()) return refuse('not a canonical origin');
  // The parser also keeps names no DNS lookup can answer (`shop..example`, `-shop.example`): an origin
  // typed so could never match a browser's, so it is refused rather than stored and silently unused.
  // Port 0 is no port a page can be served from.
  if (url.port === '0') return refuse('port 0 is not a port a page is served from');
  const hostProblem = url.hostname.startsWith('[') ? undefined : hostNameProblem(url.hostname);
  if (hostProblem) return refuse(hostProblem);
  if (url.protocol === 'https:') return { ok: true, origin: canonical };
  if (policy === 'sandbox' && isLoopbackHost(url.hostname)) return { ok: true, origin: canonical };
  return refuse(
    policy === 'sandbox'
      ? 'an origin must be https (http only on localhost in the sandbox)'
      : 'an origin must be https',
  );
}

/**
 * The canonical origin of what an operator typed (`https://Shop.example/`, `https://shop.example/cart`
 * are accepted as `https://shop.example`: a person may paste a page's address), or why it is not one.
 * Unicode hosts become punycode here, as browsers send them.
 */
export function originOfAddress(raw: string, policy: OriginPolicy): ParsedOrigin {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return refuse(`not a URL such as https://shop.example`);
  }
  // Any other scheme has no web origin (the parser names it "null", which is a sandboxed frame's): say that
  // the scheme is what is wrong.
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return refuse(
      `an origin starts with https://${policy === 'sandbox' ? ' (http:// on localhost in the sandbox)' : ''}; "${url.protocol.slice(0, 40)}" is not a web address`,
    );
  if (url.username || url.password) return refuse('an origin has no user name or password');
  return parseOrigin(url.origin, policy);
}

/**
 * The stored values an origin typed to be removed stands for: its origin as adding takes it
 * (originOfAddress, as `merchant update --remove-allowed-origin` takes it), whatever the environment so that
 * a sandbox-only origin can be taken out in production too, and the value exactly as typed, which is how
 * a row stored before origins were parsed is matched. The first is the one to name.
 */
export function originsToRemove(raw: string): string[] {
  const parsed = originOfAddress(raw, 'sandbox');
  return parsed.ok && parsed.origin !== raw ? [parsed.origin, raw] : [raw];
}

/**
 * The canonical origins among stored values (rows written before origins were parsed included): any that
 * is not already canonical is left out, never repaired, so nothing stored as sent reaches a header.
 */
export const canonicalOrigins = (stored: readonly string[]): string[] =>
  stored.filter((value) => parseOrigin(value, 'sandbox').ok);

/**
 * Whether an image may be shown on the hosted pages in production (docs/api.md#cart): https on a public
 * host name. IP literals, loopback, single-label and private-use names (.local, .internal, .lan,
 * .home.arpa, …) are refused: a member's browser would fetch them from inside the member's own network.
 */
const PRIVATE_SUFFIXES = [
  '.localhost',
  '.local',
  '.internal',
  '.intranet',
  '.lan',
  '.home',
  '.corp',
  '.private',
  '.home.arpa',
  '.test',
  '.invalid',
  '.example',
];

export function isPublicImageUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username || url.password) return false;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  // An IPv6 literal is bracketed; an IPv4 literal is all digits and dots (the parser reads 0x7f.1 as one).
  if (host.startsWith('[') || /^[\d.]+$/.test(host)) return false;
  if (!host.includes('.') || host === 'localhost') return false;
  return !PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix));
}
