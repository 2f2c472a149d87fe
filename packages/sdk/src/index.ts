// The Group Checkout browser SDK (docs/sdk.md): GroupCheckout.init() once, then GroupCheckout.button() for
// each cart. The classic build (dist/group-checkout.js) puts these exports on the global GroupCheckout.
import { createButton } from './button.ts';
import { type Config, initConfig } from './options.ts';
import type { ButtonInstance, ButtonOptions, InitOptions } from './types.ts';

export type * from './types.ts';

declare const __SDK_VERSION__: string;

/** The SDK's semver. */
export const version: string = __SDK_VERSION__;

let config: Config | undefined;

/** Checks the options and keeps them for every button made after it; throws an Error naming what is wrong. */
export function init(options: InitOptions): void {
  config = initConfig(options);
}

/** A "Pay as a group" button for one cart; call mount() to put it on the page. Throws on bad options. */
export function button(options: ButtonOptions): ButtonInstance {
  if (!config)
    throw new Error('GroupCheckout.button: call GroupCheckout.init({ merchantId, publishableKey, … }) first');
  return createButton(config, options);
}
