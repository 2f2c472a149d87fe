// A share link is forwarded; it must not open the group (docs/api.md#share-privacy). Every answer a share id
// gets (the share, its payment, its 3-D Secure refresh, the member's page) is scanned for the session id,
// the organizer's and the group's tokens and the other members' share ids; and with the public publishable
// key, nothing a member's page shows leads to the group.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { assertError } from '../helpers/errors.ts';
import { authenticate, CARDS, equalGroup, pay } from '../helpers/payments.ts';
import { organizerToken, SESSION_ENV } from '../helpers/sessions.ts';

for (const dialect of DIALECTS) {
  describe(`share privacy on ${dialect.name}`, { skip: dialect.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect, { env: SESSION_ENV });
    });
    after(() => t?.close());

    test('share answers and pages carry no session id, no token, no other member’s link', async () => {
      const group = await equalGroup(t, ['Ann', 'Bob', 'Cy', 'Dee']);
      const { created, shares } = group;
      const secrets = [
        created.session_id,
        organizerToken(created),
        created.group_access_token,
        // Ids of the same kinds, whatever their value.
      ];
      const kinds = [/gs_[0-9A-Za-z]+/, /\bat_[0-9A-Za-z]+/, /gat_[0-9A-Za-z]+/];

      for (const [i, share] of shares.entries()) {
        const others = shares.filter((_, j) => j !== i).map((s) => s.shareId);
        const answers: [string, string][] = [];
        const read = await t.request('GET', `/api/v1/shares/${share.shareId}`);
        assert.equal(read.status, 200, read.text);
        assert.equal('session_id' in read.body, false);
        answers.push(['GET share', read.text]);
        const page = await t.request('GET', `/s/${share.shareId}`);
        assert.equal(page.status, 200);
        answers.push(['member page', page.text]);
        const embedded = await t.request(
          'GET',
          `/s/${share.shareId}?embed=1&parent_origin=${encodeURIComponent('https://shop.example')}`,
        );
        answers.push(['member page, embedded', embedded.text]);
        if (i === 1) {
          const paid = await pay(t, share.shareId);
          assert.equal(paid.status, 200, paid.text);
          answers.push(['pay', paid.text]);
        }
        if (i === 2) {
          const asked = await pay(t, share.shareId, CARDS.authenticates);
          assert.equal(asked.status, 200, asked.text);
          answers.push(['pay, authentication asked', asked.text]);
          const refreshed = await authenticate(
            t,
            share.shareId,
            asked.body.next_action.client_secret,
            'succeed',
          );
          assert.equal(refreshed.status, 200, refreshed.text);
          answers.push(['refresh after authentication', refreshed.text]);
        }
        for (const [where, text] of answers) {
          for (const secret of [...secrets, ...others])
            assert.ok(!text.includes(secret), `${where} of share ${i} carries ${secret.slice(0, 4)}…`);
          for (const kind of kinds) assert.doesNotMatch(text, kind, `${where} of share ${i}`);
        }
      }
    });

    test('the publishable key reads a session only by its id, which no share answer gives', async () => {
      const { shares } = await equalGroup(t, ['Ann', 'Bob']);
      const read = await t.request('GET', `/api/v1/shares/${shares[1].shareId}`);
      // The only ids in the answer: the share's own and its member's; neither opens the session.
      for (const id of [read.body.share_id, read.body.member.id]) {
        const res = await t.request('GET', `/v1/sessions/${id}`, { key: t.merchant.publishableKey });
        assertError(res, 404, 'session_not_found');
      }
      assertError(
        await t.request('GET', '/v1/sessions', { key: t.merchant.publishableKey }),
        403,
        'secret_key_required',
      );
    });
  });
}
