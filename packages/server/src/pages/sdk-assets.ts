// The browser SDK's two builds at {pay_url}/sdk/v1/ (docs/sdk.md#serving): read from the
// @group-checkout/sdk package's dist/ and compressed once at start-up, answered from memory with a weak
// ETag (the gzip, brotli and plain bodies are the same script), cached for 5 minutes, and open to every
// origin so a merchant page can import the ES module.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';

/** Seconds a browser or proxy may reuse the script before asking again (with If-None-Match). */
const MAX_AGE_SECONDS = 300;
const FILES = ['group-checkout.js', 'group-checkout.mjs'];

interface Asset {
  etag: string;
  bodies: { identity: Buffer; gzip: Buffer; br: Buffer };
}

function load(path: string): Asset {
  const identity = readFileSync(path);
  return {
    etag: `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    bodies: {
      identity,
      gzip: gzipSync(identity, { level: 9 }),
      br: brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    },
  };
}

/** br when accepted, else gzip, else none: by q-value presence only (q=0 refuses), as browsers send them. */
function encodingFor(acceptEncoding: string | undefined): 'br' | 'gzip' | 'identity' {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return 'identity';
}

/** Whether If-None-Match names this ETag (weak comparison, RFC 9110 §13.1.2). */
function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => strip(tag) === strip(etag));
}

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
    const asset = load(join(dist, file));
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
          etag: asset.etag,
          vary: 'Accept-Encoding',
        });
        if (notModified(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
        const encoding = encodingFor(request.headers['accept-encoding']);
        if (encoding !== 'identity') reply.header('content-encoding', encoding);
        return reply.send(asset.bodies[encoding]);
      },
    );
  }
}
