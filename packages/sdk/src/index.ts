// The Group Checkout browser SDK (docs/sdk.md). Being built: see packages/sdk/README.md.
declare const __SDK_VERSION__: string;

/** The SDK's semver. */
export const version: string = __SDK_VERSION__;
