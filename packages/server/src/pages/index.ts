// The hosted pages and the browser SDK's assets under {pay_url} (docs/architecture.md). Their headers
// differ from the APIs': a Content-Security-Policy that frames them nowhere but where the session
// allows, no referrer (page URLs carry tokens), and no MIME sniffing. The pages themselves and the SDK
// are registered here by the hosted-pages work; until then this plugin serves no route, and the hook
// below is what every route added to it will answer with.
import type { App } from '../app.ts';
import type { Deps } from '../deps.ts';
import { registerSdkAssets } from './sdk-assets.ts';

const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export async function hostedPages(app: App, _options: { deps: Deps }) {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(PAGE_HEADERS);
    done();
  });
  registerSdkAssets(app);
}
