// Idempotency-Key on POST (docs/api.md#idempotency): the first answer is replayed for the same key and body, the same
// key with another body is 409, keys belong to one merchant, and concurrent requests with one key run once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signCart } from '@group-checkout/node';
import { sha256 } from '../../src/ids.ts';
import type { PaymentProcessor } from '../../src/processor/types.ts';
import { RELAXED_LIMITS, startTestApp, type TestApp } from '../helpers/app.ts';
import { manualClock } from '../helpers/clock.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { authenticate, CARDS, equalGroup, pay, payOk } from '../helpers/payments.ts';
import { SESSION_ENV, sampleCart } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const clock = manualClock(Date.now());
    let n = 0;
    const freshKey = () => `idem-${Date.now()}-${n++}`;
    before(async () => {
      t = await startTestApp(dialect, {
        clock,
        env: { ...RELAXED_LIMITS, ...SESSION_ENV },
      });
    });
    after(() => t?.close());

    const create = (key: string, idempotencyKey: string | undefined, body: unknown) =>
      t.request('POST', '/v1/webhooks', {
        key,
        body,
        headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
      });
    const endpoints = async (key: string) =>
      (await t.request('GET', '/v1/webhooks', { key })).body.data as { id: string }[];

    test('the same key and body replays the first answer and creates nothing new', async () => {
      const m = await t.createMerchant({ name: 'Replay Shop' });
      const key = freshKey();
      const body = { url: 'https://hooks.example/replay', events: ['group.funded'] };
      const first = await create(m.secretKey, key, body);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      for (let i = 0; i < 2; i++) {
        const again = await create(m.secretKey, key, body);
        assert.equal(again.status, 200);
        assert.equal(again.text, first.text, 'the same bytes, request_id and secret included');
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
        assert.match(again.headers.get('x-request-id') ?? '', /^req_/);
      }
      assert.deepEqual(
        (await endpoints(m.secretKey)).map((e) => e.id),
        [first.body.id],
      );
      // Without a key, the same body is a new request.
      assert.equal((await create(m.secretKey, undefined, body)).status, 200);
      assert.equal((await endpoints(m.secretKey)).length, 2);
    });

    test('the same key with another body is 409 idempotency_key_reused', async () => {
      const m = await t.createMerchant({ name: 'Reuse Shop' });
      const key = freshKey();
      const first = await create(m.secretKey, key, { url: 'https://hooks.example/a', events: ['*'] });
      assert.equal(first.status, 200);
      for (const other of [
        { url: 'https://hooks.example/b', events: ['*'] },
        { url: 'https://hooks.example/a', events: ['group.funded'] },
      ]) {
        const res = await create(m.secretKey, key, other);
        assertError(res, 409, 'idempotency_key_reused');
      }
      assert.equal((await endpoints(m.secretKey)).length, 1);
    });

    test('keys belong to one merchant: another merchant’s same key runs its own request', async () => {
      const a = await t.createMerchant({ name: 'Shop A' });
      const b = await t.createMerchant({ name: 'Shop B' });
      const key = freshKey();
      const body = { url: 'https://hooks.example/shared', events: ['*'] };
      const fromA = await create(a.secretKey, key, body);
      const fromB = await create(b.secretKey, key, body);
      assert.equal(fromA.status, 200);
      assert.equal(fromB.status, 200);
      assert.equal(fromB.headers.get('idempotent-replayed'), null);
      assert.notEqual(fromB.body.id, fromA.body.id);
      assert.deepEqual(
        (await endpoints(b.secretKey)).map((e) => e.id),
        [fromB.body.id],
      );
    });

    test('a publishable key never replays what the secret key was answered', async () => {
      // A headless create answers the organizer's access token. The publishable key is public: with the
      // same Idempotency-Key and body it must not get that answer, nor skip the signature it needs.
      const m = await t.createMerchant({ name: 'Headless Shop', headless: true });
      const key = freshKey();
      const body = {
        cart: {
          total: 1000,
          currency: 'usd',
          items: [{ id: 'a', name: 'A', quantity: 1, unit_price: 1000 }],
          metadata: { order_ref: 'ORD-7' },
        },
      };
      const headers = { 'idempotency-key': key };
      const first = await t.request('POST', '/v1/sessions', { key: m.secretKey, body, headers });
      assert.equal(first.status, 200, first.text);
      const replay = await t.request('POST', '/v1/sessions', {
        key: m.publishableKey,
        body,
        headers: { ...headers, origin: 'https://shop.example' },
      });
      assert.equal(replay.headers.get('idempotent-replayed'), null);
      assertError(replay, 400, 'invalid_signature');
      assert.doesNotMatch(replay.text, /at_/);
      // The secret key still gets its own replay.
      const again = await t.request('POST', '/v1/sessions', { key: m.secretKey, body, headers });
      assert.equal(again.text, first.text);
    });

    test('ten concurrent requests with one key run once', async () => {
      const m = await t.createMerchant({ name: 'Concurrent Shop' });
      const key = freshKey();
      const body = { url: 'https://hooks.example/concurrent', events: ['*'] };
      const answers = await Promise.all(Array.from({ length: 10 }, () => create(m.secretKey, key, body)));
      const created = await endpoints(m.secretKey);
      assert.equal(created.length, 1, 'exactly one endpoint');
      const originals = answers.filter(
        (a) => a.status === 200 && a.headers.get('idempotent-replayed') === null,
      );
      assert.equal(originals.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
      for (const a of answers) {
        if (a.status === 200) assert.equal(a.body.id, created[0]?.id);
        else {
          assertError(a, 409, 'idempotency_in_progress');
        }
      }
      // Once the first has answered, the key replays.
      const later = await create(m.secretKey, key, body);
      assert.equal(later.headers.get('idempotent-replayed'), 'true');
      assert.equal(later.text, originals[0]?.text);
    });

    test('a request refused as invalid is not stored: the corrected request may use the key', async () => {
      const m = await t.createMerchant({ name: 'Careful Shop' });
      const key = freshKey();
      // Refused by the schema.
      const bad = await create(m.secretKey, key, { url: 'https://hooks.example/x', events: ['nope'] });
      assertError(bad, 400, 'invalid_request');
      // Refused by the handler's own URL check.
      const badUrl = await create(m.secretKey, key, { url: 'ftp://hooks.example/x', events: ['*'] });
      assertError(badUrl, 400, 'invalid_request');
      const fixed = await create(m.secretKey, key, { url: 'https://hooks.example/x', events: ['*'] });
      assert.equal(fixed.status, 200, fixed.text);
      assert.equal(fixed.headers.get('idempotent-replayed'), null);
      assert.equal((await endpoints(m.secretKey)).length, 1);
    });

    test('a 400 for the endpoint limit is not stored either: the retry after freeing a place runs', async () => {
      const m = await t.createMerchant({ name: 'Full Shop' });
      for (let i = 0; i < 16; i++) {
        await create(m.secretKey, undefined, { url: `https://hooks.example/${i}`, events: ['*'] });
      }
      const key = freshKey();
      const body = { url: 'https://hooks.example/17', events: ['*'] };
      const full = await create(m.secretKey, key, body);
      assertError(full, 400, 'webhook_limit_reached');
      const [oldest] = await endpoints(m.secretKey);
      await t.request('DELETE', `/v1/webhooks/${oldest?.id}`, { key: m.secretKey });
      const retried = await create(m.secretKey, key, body);
      assert.equal(retried.status, 200, retried.text);
    });

    test('a "not yet" is never kept: a pay retried with its key after the share was paid gets the real answer', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      const ben = g.shares[1].shareId;
      // Ben's first payment waits on his bank (3-D Secure); a custom payer UI pays again with a key.
      const first = await payOk(t, ben, CARDS.authenticates);
      const headers = { 'idempotency-key': freshKey() };
      assertError(await pay(t, ben, CARDS.ok, headers), 409, 'payment_in_progress');
      const done = await authenticate(t, ben, first.body.next_action.client_secret, 'succeed');
      assert.equal(done.body.status, 'paid', done.text);
      // The same key again: run again, and told what is true now.
      const retry = await pay(t, ben, CARDS.ok, headers);
      assertError(retry, 409, 'share_not_pending');
      assert.equal(retry.headers.get('idempotent-replayed'), null, 'run again, not replayed');
      // And an answer that is final is kept as usual: the next retry replays it.
      const replay = await pay(t, ben, CARDS.ok, headers);
      assert.equal(replay.status, 409);
      assert.equal(replay.body.code, 'share_not_pending');
      assert.equal(replay.body.request_id, retry.body.request_id);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    });

    test('an invalid Idempotency-Key is 400', async () => {
      for (const bad of ['x'.repeat(256), 'has space', 'tab\there', 'ünïcode']) {
        const res = await t.request('POST', '/v1/webhooks', {
          key: t.merchant.secretKey,
          body: { url: 'https://hooks.example/k', events: ['*'] },
          headers: { 'idempotency-key': bad },
        });
        assertError(res, 400, 'invalid_idempotency_key', bad);
      }
      const longest = await create(t.merchant.secretKey, 'y'.repeat(255), {
        url: 'https://hooks.example/k',
        events: ['*'],
      });
      assert.equal(longest.status, 200, longest.text);
    });

    test('answers are kept for 24 hours, then the key is free again', async () => {
      const m = await t.createMerchant({ name: 'Patient Shop' });
      const key = freshKey();
      const body = { url: 'https://hooks.example/day', events: ['*'] };
      const first = await create(m.secretKey, key, body);
      clock.advance(23 * 60 * 60 * 1000);
      const replay = await create(m.secretKey, key, body);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      clock.advance(60 * 60 * 1000 + 1);
      const fresh = await create(m.secretKey, key, body);
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers.get('idempotent-replayed'), null);
      assert.notEqual(fresh.body.id, first.body.id);
    });

    test('a claim left unanswered by a process that died is taken over after a minute', async () => {
      const m = await t.createMerchant({ name: 'Orphan Shop' });
      const key = freshKey();
      const now = clock.now();
      await t.deps.db.kysely
        .insertInto('idempotency_keys')
        .values({
          scope: `merchant:${m.merchant.id}:secret`,
          // Keys are stored as their SHA-256 (flows/idempotency.ts).
          key: sha256(key),
          request_hash: 'from a process that died',
          status_code: null,
          response_body: null,
          created_at: now - 61_000,
          expires_at: now + 24 * 60 * 60 * 1000,
        })
        .execute();
      // Within the minute the claim still belongs to the process that made it (another request's, here).
      clock.advance(-2_000);
      const early = await create(m.secretKey, key, { url: 'https://hooks.example/orphan', events: ['*'] });
      assert.equal(early.status, 409, early.text);
      assert.equal(early.body.code, 'idempotency_key_reused');
      clock.advance(2_000);
      const res = await create(m.secretKey, key, { url: 'https://hooks.example/orphan', events: ['*'] });
      assert.equal(res.status, 200, res.text);
    });

    test('the same body with its keys in another order is the same request', async () => {
      const m = await t.createMerchant({ name: 'Order Shop' });
      const key = freshKey();
      const first = await t.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        rawBody: '{"url":"https://hooks.example/order","events":["group.funded","group.created"]}',
      });
      assert.equal(first.status, 200, first.text);
      const reordered = await t.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        rawBody: '{ "events": ["group.funded", "group.created"],\n  "url": "https://hooks.example/order" }',
      });
      assert.equal(reordered.status, 200, reordered.text);
      assert.equal(reordered.headers.get('idempotent-replayed'), 'true');
      assert.equal(reordered.body.id, first.body.id);
      // The order of an array is part of the request.
      const swapped = await t.request('POST', '/v1/webhooks', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        rawBody: '{"url":"https://hooks.example/order","events":["group.created","group.funded"]}',
      });
      assert.equal(swapped.status, 409);
    });

    test('no body and {} are the same request', async () => {
      const m = await t.createMerchant({ name: 'Empty Shop' });
      const created = await t.request('POST', '/v1/sessions', {
        key: m.secretKey,
        body: { cart: sampleCart() },
      });
      assert.equal(created.status, 200, created.text);
      const key = freshKey();
      const cancel = (body?: unknown) =>
        t.request('POST', `/v1/sessions/${created.body.session_id}/cancel`, {
          key: m.secretKey,
          headers: { 'idempotency-key': key },
          body,
        });
      const first = await cancel();
      assert.equal(first.status, 200, first.text);
      const again = await cancel({});
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
    });

    test('a cancel replayed with its key answers what the first answer said: the refunds made, not pending', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId);
      const headers = { 'idempotency-key': freshKey() };
      const cancel = () =>
        t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
          key: t.merchant.secretKey,
          headers,
        });
      const first = await cancel();
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.refunds.length, 1);
      assert.equal(first.body.refunds[0].status, 'succeeded');
      assert.match(first.body.refunds[0].id, /^re_/);
      const again = await cancel();
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, first.text, 'the same bytes as the first answer');
    });

    test('a 403 is not stored: the key stays free for the request that is allowed', async () => {
      const m = await t.createMerchant({ name: 'Signed Shop', headless: false });
      const key = freshKey();
      const cart = sampleCart();
      const refused = await t.request('POST', '/v1/sessions', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        body: { cart },
      });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'headless_not_enabled');
      const signed = await t.request('POST', '/v1/sessions', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        body: { cart, signature: signCart(cart, m.merchant.signingSecret) },
      });
      assert.equal(signed.status, 200, signed.text);
      assert.equal(signed.headers.get('idempotent-replayed'), null);
    });

    test('a pay-page request with a wrong token is 401 and leaves no idempotency record', async () => {
      const before = await idempotencyRows();
      for (const [path, body] of [
        ['/api/v1/session/cancel?access=nope', undefined],
        ['/api/v1/session/join?access=gat_nope', { name: 'Mallory' }],
      ] as const) {
        const res = await t.request('POST', path, { headers: { 'idempotency-key': freshKey() }, body });
        assert.equal(res.status, 401, res.text);
        assert.equal(res.body.code, 'invalid_access_token');
      }
      assert.equal(await idempotencyRows(), before);
    });

    test('stored answers are sealed: no organizer token in clear', async () => {
      const m = await t.createMerchant({ name: 'Sealed Shop' });
      const key = freshKey();
      const res = await t.request('POST', '/v1/sessions', {
        key: m.secretKey,
        headers: { 'idempotency-key': key },
        body: { cart: sampleCart() },
      });
      assert.equal(res.status, 200, res.text);
      const token = new URL(res.body.session_url).searchParams.get('access') ?? '';
      const row = await t.deps.db.kysely
        .selectFrom('idempotency_keys')
        .select('response_body')
        .where('key', '=', sha256(key))
        .executeTakeFirstOrThrow();
      assert.match(row.response_body ?? '', /^sealed:v1:/);
      assert.ok(!(row.response_body ?? '').includes(token));
      assert.ok(!(row.response_body ?? '').includes(res.body.session_id), 'nothing of the answer shows');
    });

    const idempotencyRows = async () =>
      Number(
        (
          await t.deps.db.kysely
            .selectFrom('idempotency_keys')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
  });
}

// A cancel commits its answer with the close, then makes the refunds and answers: a retry with its key
// meanwhile is in progress (409), never a different 200; only once the first request counts as dead
// (its claim abandoned) does a retry get the answer committed with the close.
for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on a cancel still refunding, on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    const clock = manualClock(Date.now());
    // Refunds wait at this gate: the test decides when the processor answers.
    let reached: () => void = () => undefined;
    let open: () => void = () => undefined;
    const atGate = () => new Promise<void>((resolve) => (reached = resolve));
    let gate = Promise.resolve();
    before(async () => {
      t = await startTestApp(dialect, {
        clock,
        env: { ...RELAXED_LIMITS, ...SESSION_ENV },
        wrapProcessor: (processor: PaymentProcessor) => ({
          ...processor,
          refund: async (request) => {
            reached();
            await gate;
            return processor.refund(request);
          },
        }),
      });
    });
    after(() => t?.close());

    test('a retry while the refunds are made is 409 in progress; after, the final answer byte for byte', async () => {
      const g = await equalGroup(t, ['Ada', 'Ben']);
      await payOk(t, g.shares[0].shareId);
      const headers = { 'idempotency-key': `cancel-${Date.now()}` };
      const cancel = () =>
        t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, {
          key: t.merchant.secretKey,
          headers,
        });
      gate = new Promise<void>((resolve) => (open = resolve));
      const atRefund = atGate();
      const first = cancel();
      await atRefund;
      const inProgress = await cancel();
      assertError(inProgress, 409, 'idempotency_in_progress');
      assert.equal(inProgress.headers.get('retry-after'), '1', 'the client is told when to ask again');

      // The first request seems dead (its claim is past the abandon time): its close's answer is replayed.
      clock.advance(61_000);
      const meanwhile = await cancel();
      assert.equal(meanwhile.status, 200, meanwhile.text);
      assert.equal(meanwhile.headers.get('idempotent-replayed'), 'true');
      assert.equal(meanwhile.body.refunds[0].status, 'pending');

      open();
      const answered = await first;
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.body.refunds[0].status, 'succeeded');
      const again = await cancel();
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, answered.text, 'the same bytes as the first answer');
    });
  });
}
