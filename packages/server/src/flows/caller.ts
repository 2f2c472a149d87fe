// Who is calling a flow: the merchant an API key belongs to, and which kind of key it was. The API
// layer builds it from the request (api/auth.ts); flows never see HTTP.
import type { Deps } from '../deps.ts';
import {
  type ApiKeyWithMerchant,
  findActiveKeyByHash,
  type KeyKind,
  type Merchant,
} from '../store/merchants.ts';

export interface Caller {
  merchant: Merchant;
  keyKind: KeyKind;
  /** The key as presented; kept only for the request, to tell a merchant it signed a cart with it. */
  presentedKey: string;
}

/** The key with this SHA-256 hash that works now, with its merchant; undefined for an unknown or revoked key. */
export const findKeyByHash = (deps: Deps, keyHash: string): Promise<ApiKeyWithMerchant | undefined> =>
  findActiveKeyByHash(deps.db, keyHash, deps.clock.now());
