// The browser SDK's two builds at {pay_url}/sdk/v1/ (docs/sdk.md#serving): read at start-up from the
// @group-checkout/sdk package's dist/, this service's addresses written in (withServedBy), compressed on
// first use (pages/compressed.ts), answered from memory with a weak ETag (the gzip, brotli and plain
// bodies are the same script), cached for 5 minutes, and open to every origin so a merchant page can
// import the ES module.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app-type.ts';
import { compress, sendCompressed } from './compressed.ts';

/** Seconds a browser or proxy may reuse the script before asking again (with If-None-Match). */
const MAX_AGE_SECONDS = 300;
const FILES = ['group-checkout.js', 'group-checkout.mjs'];

/** What the SDK's source holds in place of its service's addresses (packages/sdk/src/options.ts). */
const SERVED_BY = '__GROUP_CHECKOUT_SERVED_BY__';

/**
 * The script with this service's addresses in place of the placeholder: %-encoded JSON, which no quote
 * or backslash can break out of, so that `init()` defaults to the API and the pages that served it.
 */
function withServedBy(script: string, urls: { pay: string; api: string }): string {
  const encoded = encodeURIComponent(JSON.stringify(urls)).replace(/'/g, '%27');
  return script.replace(SERVED_BY, encoded);
}

export function registerSdkAssets(app: App, urls: { pay: string; api: string }): void {
  const dist = join(dirname(fileURLToPath(import.meta.resolve('@group-checkout/sdk/package.json'))), 'dist');
  if (!FILES.every((file) => existsSync(join(dist, file)))) {
    app.log.warn(
      { dist },
      'the browser SDK is not built, so /sdk/v1/ is not served: run npm run build -w @group-checkout/sdk',
    );
    return;
  }
  for (const file of FILES) {
    const script = readFileSync(join(dist, file), 'utf8');
    if (!script.includes(SERVED_BY))
      app.log.warn(
        { file },
        'the browser SDK build has no address placeholder: rebuild it (npm run build -w @group-checkout/sdk)',
      );
    const asset = compress(Buffer.from(withServedBy(script, urls)));
    // Not an API operation: kept out of openapi.json.
    app.get(
      `/sdk/v1/${file}`,
      { schema: { hide: true } },
      async (request: FastifyRequest, reply: FastifyReply) => {
        reply.headers({
          'content-type': 'text/javascript; charset=utf-8',
          'access-control-allow-origin': '*',
          'cross-origin-resource-policy': 'cross-origin',
          'cache-control': `public, max-age=${MAX_AGE_SECONDS}`,
        });
        return sendCompressed(request, reply, asset);
      },
    );
  }
}
