// Sealing stored secrets (docs/operations.md#secrets-at-rest): AES-256-GCM under a key named by its id,
// bound to the row and column it is stored in; plaintext passes through for databases from before.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { NO_KEYS, SecretBox, sealedKeyId, secretsKeyId } from '../../src/store/secrets.ts';

const A = randomBytes(32);
const B = randomBytes(32);
const SECRET = 'svc_sig_live_4gk2J9x0TqLw8Vb1Zr7Yc3Hn5Mp6Ds';
const HERE = 'merchants.signing_secret:svc_merch_1';

test('a sealed value does not contain the secret, carries the key id, and opens to the secret', () => {
  const box = new SecretBox({ current: A });
  const sealed = box.seal(SECRET, HERE);
  assert.match(sealed, /^enc:v1:[0-9a-f]{12}:[A-Za-z0-9+/]+=*:[A-Za-z0-9+/]+=*$/);
  assert.ok(!sealed.includes(SECRET));
  assert.equal(sealedKeyId(sealed), secretsKeyId(A));
  assert.equal(box.currentKeyId, secretsKeyId(A));
  assert.equal(box.open(sealed, HERE), SECRET);
  assert.notEqual(box.seal(SECRET, HERE), sealed, 'a fresh IV each time');
  assert.ok(box.isCurrent(sealed));
});

test('a value sealed for one row or column does not open in another', () => {
  const box = new SecretBox({ current: A });
  const sealed = box.seal(SECRET, HERE);
  assert.throws(() => box.open(sealed, 'merchants.signing_secret:svc_merch_2'), /altered or moved/);
  assert.throws(() => box.open(sealed, 'merchants.session_webhook_secret:svc_merch_1'), /altered or moved/);
});

test('an altered value does not open', () => {
  const box = new SecretBox({ current: A });
  const sealed = box.seal(SECRET, HERE);
  const body = sealed.slice(sealed.lastIndexOf(':') + 1);
  const flipped = Buffer.from(body, 'base64');
  flipped[0] = (flipped[0] as number) ^ 1;
  assert.throws(
    () => box.open(`${sealed.slice(0, sealed.lastIndexOf(':') + 1)}${flipped.toString('base64')}`, HERE),
    /altered or moved/,
  );
});

test('the previous key still opens; an unknown key names its id and never the secret', () => {
  const old = new SecretBox({ current: A }).seal(SECRET, HERE);
  const rotated = new SecretBox({ current: B, previous: A });
  assert.equal(rotated.open(old, HERE), SECRET);
  assert.equal(rotated.isCurrent(old), false);
  assert.ok(rotated.knows(secretsKeyId(A)) && rotated.knows(secretsKeyId(B)));
  const dropped = new SecretBox({ current: B });
  assert.throws(
    () => dropped.open(old, HERE),
    (error: Error) =>
      error.message.includes(secretsKeyId(A)) &&
      /neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/.test(error.message),
  );
  assert.throws(() => NO_KEYS.open(old, HERE), /neither SECRETS_KEY/);
});

test('without a key values are stored as they are; plaintext is read as it is under any key', () => {
  assert.equal(NO_KEYS.seal(SECRET, HERE), SECRET);
  assert.equal(NO_KEYS.open(SECRET, HERE), SECRET);
  assert.ok(NO_KEYS.isCurrent(SECRET));
  const box = new SecretBox({ current: A });
  assert.equal(box.open(SECRET, HERE), SECRET);
  assert.equal(box.isCurrent(SECRET), false);
});
