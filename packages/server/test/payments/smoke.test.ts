import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { CARDS, equalGroup, merchantSession, pay, payOk } from '../helpers/payments.ts';
import { eventRows, organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

const dialect = DIALECTS[0];
describe('smoke', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(dialect, { env: SESSION_ENV });
  });
  after(() => t?.close());

  test('immediate: 3-way funded', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben', 'Cy']);
    const d = await pay(t, g.shares[0].shareId, CARDS.declined);
    console.log(d.status, d.body);
    for (const s of g.shares) console.log((await payOk(t, s.shareId)).body);
    const view = await merchantSession(t, g.created.session_id);
    console.log(JSON.stringify(view, null, 1));
    console.log((await eventRows(t, g.created.session_id)).map((e) => e.type));
  });
  test('on_funded cancel', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
    await payOk(t, g.shares[0].shareId);
    const c = await t.request('POST', `/api/v1/session/cancel?access=${organizerToken(g.created)}`, {});
    console.log(c.status, c.body);
    console.log(JSON.stringify(await merchantSession(t, g.created.session_id)));
    console.log((await eventRows(t, g.created.session_id)).map((e) => e.type));
  });
  test('immediate cancel', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben']);
    await payOk(t, g.shares[0].shareId);
    const c = await t.request('POST', `/v1/sessions/${g.created.session_id}/cancel`, { key: t.merchant.secretKey });
    console.log(c.status, c.body);
    console.log(JSON.stringify(await merchantSession(t, g.created.session_id)));
    console.log((await eventRows(t, g.created.session_id)).map((e) => e.type));
  });
  test('on_funded funded', async () => {
    const g = await equalGroup(t, ['Ada', 'Ben'], { group_config: { capture: 'on_funded' } });
    await payOk(t, g.shares[0].shareId);
    console.log((await payOk(t, g.shares[1].shareId)).body);
    console.log(JSON.stringify(await merchantSession(t, g.created.session_id)));
    console.log((await eventRows(t, g.created.session_id)).map((e) => e.type));
  });
});
