// The shares the pay benchmarks spend: a share is paid once, so every request of POST
// /api/v1/shares/{id}/pay needs a pending share of its own. Both servers get the same number of open
// sessions, each with a group of GROUP_SIZE shares split in custom amounts, before any load; autocannon
// then takes them one after the other, a group's shares in order, so that one request in GROUP_SIZE pays
// the last share of its group (the service then funds the session and starts its transfer).
import { benchCart, sessionBody } from './cart.ts';

/** The largest group the service allows: the last-share (funding) path is 1 request in 50. */
export const GROUP_SIZE = 50;

/** The pay request's body: a sandbox test card that always succeeds. */
export const PAY_BODY = JSON.stringify({
  card: { number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' },
});

/** Hands out share ids in order; a spent pool answers a path that cannot succeed (counted as non-2xx). */
export class SharePool {
  private next = 0;
  constructor(private readonly shares: readonly string[]) {}
  path(): string {
    const share = this.shares[this.next++] ?? 'shr_pool_exhausted';
    return `/api/v1/shares/${share}/pay`;
  }
  get used(): number {
    return this.next;
  }
  get size(): number {
    return this.shares.length;
  }
}

async function post(url: string, method: string, headers: Record<string, string>, body: string) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`seeding: ${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * `sessions` sessions on the service, made as a merchant and an organizer make them: POST /v1/sessions
 * (capture immediate, room for GROUP_SIZE), then PUT the group in custom amounts. Answers the share ids.
 */
export async function seedService(
  baseUrl: string,
  createHeaders: Record<string, string>,
  signingSecret: string,
  sessions: number,
): Promise<string[]> {
  const groups = await seedGroups(baseUrl, createHeaders, signingSecret, sessions, GROUP_SIZE);
  return groups.flatMap((g) => g.shares);
}

/** A session made by seedGroups: its id, the organizer's access token and its share ids in order. */
export interface SeededGroup {
  sessionId: string;
  access: string;
  /** The organizer's page, as session_url names it (path and query). */
  organizerPath: string;
  shares: string[];
}

/**
 * `sessions` sessions with a group of `size` members each (capture immediate, custom amounts), made over
 * the API four at a time; answers them in the order they were asked for.
 */
export async function seedGroups(
  baseUrl: string,
  createHeaders: Record<string, string>,
  signingSecret: string,
  sessions: number,
  size: number,
): Promise<SeededGroup[]> {
  const body = sessionBody(signingSecret, { group_config: { max_size: size, capture: 'immediate' } });
  const total = benchCart().total;
  const each = Math.floor(total / size);
  const members = Array.from({ length: size }, (_, i) => ({
    name: `Member ${i}`,
    amount_cents: i === 0 ? total - each * (size - 1) : each,
  }));
  const group = JSON.stringify({ mode: 'custom', members });
  const made: SeededGroup[] = [];
  let next = 0;
  async function worker() {
    while (next < sessions) {
      const index = next++;
      const created = await post(`${baseUrl}/v1/sessions`, 'POST', createHeaders, body);
      const url = new URL(created.session_url as string);
      const access = url.searchParams.get('access') ?? '';
      const set = (await post(`${baseUrl}/api/v1/session/group?access=${access}`, 'PUT', {}, group)) as {
        group: { members: { share_id: string }[] };
      };
      made[index] = {
        sessionId: created.session_id as string,
        access,
        organizerPath: `${url.pathname}${url.search}`,
        shares: set.group.members.map((m) => m.share_id),
      };
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker));
  return made;
}

/** The same on the same-writes reference, which writes them with raw statements (reference-pay.ts). */
export async function seedReference(baseUrl: string, sessions: number): Promise<string[]> {
  const shares: string[] = [];
  for (let done = 0; done < sessions; done += 100) {
    const body = JSON.stringify({
      sessions: Math.min(100, sessions - done),
      members: GROUP_SIZE,
      cart: benchCart(),
    });
    shares.push(...((await post(`${baseUrl}/bench/seed`, 'POST', {}, body)).shares as string[]));
  }
  return shares;
}
