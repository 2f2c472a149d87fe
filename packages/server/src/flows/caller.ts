// Who is calling a flow: the merchant an API key belongs to, and which kind of key it was. The API
// layer builds it from the request (api/auth.ts); flows never see HTTP.
import type { KeyKind, Merchant } from '../store/merchants.ts';

export interface Caller {
  merchant: Merchant;
  keyKind: KeyKind;
  /** The key as presented; kept only for the request, to tell a merchant it signed a cart with it. */
  presentedKey: string;
}
