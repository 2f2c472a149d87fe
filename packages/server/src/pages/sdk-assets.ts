// The browser SDK's two builds at {pay_url}/sdk/v1/ (docs/sdk.md#serving): read at start-up from the
// @group-checkout/sdk package's dist/, compressed on first use (pages/compressed.ts), answered from memory
// with a weak ETag (the gzip, brotli and plain bodies are the same script), cached for 5 minutes, and open
// to every origin so a merchant page can import the ES module.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app-type.ts';
import { compress, sendCompressed } from './compressed.ts';

/** Seconds a browser or proxy may reuse the script before asking again (with If-None-Match). */
const MAX_AGE_SECONDS = 300;
const FILES = ['group-checkout.js', 'group-checkout.mjs'];

export function registerSdkAssets(app: App): void {
  const dist = join(dirname(fileURLToPath(import.meta.resolve('@group-checkout/sdk/package.json'))), 'dist');
  if (!FILES.every((file) => existsSync(join(dist, file)))) {
    app.log.warn(
      { dist },
      'the browser SDK is not built, so /sdk/v1/ is not served: run npm run build -w @group-checkout/sdk',
    );
    return;
  }
  for (const file of FILES) {
    const asset = compress(readFileSync(join(dist, file)));
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
