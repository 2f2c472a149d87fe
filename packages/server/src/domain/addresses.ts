// Which network addresses our webhook deliveries may call (docs/api.md#webhook-endpoints): none of the
// private, loopback, link-local, CGNAT, metadata, documentation or multicast ranges. Used when an endpoint
// is registered and again on the address every delivery connects to.
import { isIP } from 'node:net';

// The ranges a webhook may not reach (docs/api.md#webhook-endpoints). An IPv6 address that carries an
// IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo) is judged by the IPv4 address it
// carries, so that no spelling of 127.0.0.1 gets through.
const NON_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved
  ['255.255.255.255', 32], // broadcast
];

const NON_PUBLIC_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  // NAT64 local-use: where the IPv4 address sits depends on the operator's prefix length, so the
  // whole prefix is refused; it never names a public host anyway.
  ['64:ff9b:1::', 48],
];

/** An IPv4 address in dotted decimal as a 32-bit number; undefined for anything else. */
function parseV4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

/** An IPv6 address (hex groups, `::`, an IPv4 tail) as a 128-bit number; undefined for anything else. */
function parseV6(text: string): bigint | undefined {
  // A zone (fe80::1%eth0) names a link on this machine: never a public address.
  if (isIP(text) !== 6 || text.includes('%')) return undefined;
  // isIP has vouched for the shape; only the IPv4 tail (::ffff:1.2.3.4) needs turning into two groups.
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => {
    const group = (hi: string, lo: string) => ((Number(hi) << 8) | Number(lo)).toString(16);
    return `${group(a, b)}:${group(c, d)}`;
  });
  const [left = '', right] = hex.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => BigInt(`0x${g}`)) : []);
  const before = groups(left);
  const after = groups(right);
  const all = [...before, ...Array<bigint>(8 - before.length - after.length).fill(0n), ...after];
  return all.reduce((value, group) => (value << 16n) | group, 0n);
}

const V4_RANGES = NON_PUBLIC_V4.map(([net, bits]) => ({ net: parseV4(net) as number, bits }));
const V6_RANGES = NON_PUBLIC_V6.map(([net, bits]) => ({ net: parseV6(net) as bigint, bits }));

const inV4Range = (address: number, net: number, bits: number) =>
  Math.floor(address / 2 ** (32 - bits)) === Math.floor(net / 2 ** (32 - bits));
const inV6Range = (address: bigint, net: bigint, bits: number) =>
  address >> BigInt(128 - bits) === net >> BigInt(128 - bits);

const isPublicV4 = (address: number) => !V4_RANGES.some(({ net, bits }) => inV4Range(address, net, bits));

const LOW_32 = 0xffffffffn;
/** The first 96 bits of the forms that carry an IPv4 address in their last 32 bits. */
const LAST_32_CARRIERS = [
  '::', // IPv4-compatible ::a.b.c.d (deprecated); also :: and ::1, judged as 0.0.0.0 and 0.0.0.1
  '::ffff:0:0', // IPv4-mapped ::ffff:a.b.c.d
  '::ffff:0:0:0', // IPv4-translated ::ffff:0:a.b.c.d
  '64:ff9b::', // NAT64 well-known prefix
].map((prefix) => (parseV6(prefix) as bigint) >> 32n);
const SIX_TO_FOUR = 0x2002n; // 2002::/16
const TEREDO = 0x20010000n; // 2001::/32

/** The IPv4 addresses an IPv6 address carries, by its form; [] when it carries none. */
function carriedV4(address: bigint): number[] {
  if (LAST_32_CARRIERS.includes(address >> 32n)) return [Number(address & LOW_32)];
  // 6to4, 2002:AABB:CCDD::/48: the address is bits 16 to 47.
  if (address >> 112n === SIX_TO_FOUR) return [Number((address >> 80n) & LOW_32)];
  // Teredo: the server is bits 32 to 63, the client the last 32 bits with every bit inverted.
  if (address >> 96n === TEREDO) return [Number((address >> 64n) & LOW_32), Number(~address & LOW_32)];
  return [];
}

/**
 * Whether an address (IPv4 dotted, or IPv6) is one our delivery workers may call.
 */
export function isPublicAddress(address: string): boolean {
  const v4 = parseV4(address);
  if (v4 !== undefined) return isPublicV4(v4);
  const v6 = parseV6(address);
  if (v6 === undefined) return false;
  if (V6_RANGES.some(({ net, bits }) => inV6Range(v6, net, bits))) return false;
  return carriedV4(v6).every(isPublicV4);
}
